//! What an application does with checkpoints besides the settings: take a savepoint of a
//! running query (and stop it), read how its checkpoints went, and find the checkpoint a
//! restarted query will resume from — with the position each fed table resumes at, so the
//! application knows which rows to send again.

use std::path::{Path, PathBuf};

use datafusion::common::Result;

use super::Session;
use crate::checkpoint::jobs::CheckpointStats;
use crate::checkpoint::manifest::{self, Complete};

/// A complete checkpoint or savepoint on disk.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    complete: Complete,
}

impl Checkpoint {
    /// The checkpoint `path` names for the process table function of `uid`: a checkpoint or
    /// savepoint directory, or a directory of checkpoints, of which the newest complete one
    /// is taken (as `execution.state-recovery.path` is read). An error says what is missing
    /// or broken.
    pub fn find(path: impl AsRef<Path>, uid: &str) -> Result<Checkpoint> {
        manifest::resolve(path.as_ref(), uid).map(|complete| Checkpoint { complete })
    }

    pub fn id(&self) -> u64 {
        self.complete.manifest.id
    }

    pub fn dir(&self) -> &Path {
        &self.complete.dir
    }

    pub fn is_savepoint(&self) -> bool {
        self.complete.manifest.savepoint
    }

    /// The rows of fed table `table` read before the checkpoint: a query restored from it
    /// goes on with the row after them, so the application sends from there. A file scan
    /// is named by the directory its files share (e.g. `file:///data/events/`); a restore
    /// reads on from its own position in them.
    pub fn position(&self, table: &str) -> Option<u64> {
        self.complete.manifest.position(table)
    }

    /// The size of its state files.
    pub fn state_bytes(&self) -> u64 {
        self.complete.manifest.state_bytes()
    }
}

impl Session {
    /// Takes a savepoint of the running query whose process table function has `uid`, into
    /// `dir` (as `<dir>/savepoint-<uid>-<id>`, which it returns); the query goes on.
    pub async fn savepoint(&self, uid: &str, dir: impl AsRef<Path>) -> Result<PathBuf> {
        self.jobs
            .savepoint(uid, dir.as_ref().to_owned(), false)
            .await
    }

    /// Takes a savepoint as [`Session::savepoint`] does and stops the query at it: its
    /// sources read nothing more and its output ends after the rows from before the savepoint
    /// — without the end of input, so no timer fires for it. A query restored from the
    /// savepoint goes on from there.
    pub async fn stop_with_savepoint(&self, uid: &str, dir: impl AsRef<Path>) -> Result<PathBuf> {
        self.jobs
            .savepoint(uid, dir.as_ref().to_owned(), true)
            .await
    }

    /// How the checkpoints of the query of `uid` went (running, or the latest that ran).
    pub fn checkpoint_stats(&self, uid: &str) -> Option<CheckpointStats> {
        self.jobs.stats(uid)
    }
}
