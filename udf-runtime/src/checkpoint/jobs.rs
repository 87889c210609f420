//! The checkpointed queries running in a session, by the `uid` of their process table
//! function: what `Session::savepoint` reaches and `Session::checkpoint_stats` reads.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use datafusion::common::{DataFusionError, Result};
use tokio::sync::{mpsc, oneshot};

use super::lock;

/// What a query's checkpoints did so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckpointStats {
    pub completed: u64,
    pub failed: u64,
    /// Failed checkpoints since the last complete one.
    pub failed_in_a_row: u32,
    pub last_id: Option<u64>,
    pub last_path: Option<PathBuf>,
    /// From trigger to manifest.
    pub last_duration: Option<Duration>,
    /// The state files' bytes.
    pub last_bytes: u64,
    /// The longest a processor waited between the first and the last of its barriers.
    pub last_alignment: Duration,
    /// The checkpoint the query started from.
    pub restored_from: Option<PathBuf>,
    pub last_failure: Option<String>,
}

/// A request for a savepoint into `dir`, stopping the query after it if `stop`.
pub struct SavepointRequest {
    pub dir: PathBuf,
    pub stop: bool,
    pub reply: oneshot::Sender<Result<PathBuf>>,
}

struct Running {
    requests: mpsc::Sender<SavepointRequest>,
    stats: Arc<Mutex<CheckpointStats>>,
    run: u64,
}

#[derive(Default)]
pub struct Jobs {
    running: Mutex<HashMap<String, Running>>,
    /// The statistics of queries that ended, by uid.
    ended: Mutex<HashMap<String, Arc<Mutex<CheckpointStats>>>>,
    runs: std::sync::atomic::AtomicU64,
    /// Woken whenever a run registers.
    registered: tokio::sync::Notify,
}

/// How long a savepoint request waits for the query it names to start running: a query's
/// operators start with its first poll, after `execute_stream` returns.
const START_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Jobs")
    }
}

impl Jobs {
    /// Registers the run of `uid`; an error if another query runs it.
    pub fn register(
        &self,
        uid: &str,
        requests: mpsc::Sender<SavepointRequest>,
        stats: Arc<Mutex<CheckpointStats>>,
    ) -> Result<u64> {
        let mut running = lock(&self.running);
        if running.contains_key(uid) {
            return Err(DataFusionError::Execution(format!(
                "a query with the operator of uid `{uid}` is already running; \
                 a uid names one running query (its state and checkpoints)"
            )));
        }
        let run = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        running.insert(
            uid.to_owned(),
            Running {
                requests,
                stats,
                run,
            },
        );
        self.registered.notify_waiters();
        Ok(run)
    }

    /// The run `run` of `uid` is over.
    pub fn unregister(&self, uid: &str, run: u64) {
        let mut running = lock(&self.running);
        if running.get(uid).is_some_and(|r| r.run == run) {
            let ended = running.remove(uid).expect("just found");
            // Shared, not copied: the run's last savepoint may still be noted in it.
            lock(&self.ended).insert(uid.to_owned(), ended.stats);
        }
    }

    pub fn stats(&self, uid: &str) -> Option<CheckpointStats> {
        if let Some(running) = lock(&self.running).get(uid) {
            return Some(lock(&running.stats).clone());
        }
        lock(&self.ended).get(uid).map(|stats| lock(stats).clone())
    }

    /// The requests of the running query of `uid`, waiting up to [`START_WAIT`] for it.
    async fn requests(&self, uid: &str) -> Result<mpsc::Sender<SavepointRequest>> {
        let deadline = tokio::time::Instant::now() + START_WAIT;
        loop {
            let registered = self.registered.notified();
            if let Some(running) = lock(&self.running).get(uid) {
                return Ok(running.requests.clone());
            }
            if tokio::time::timeout_at(deadline, registered).await.is_err() {
                let mut uids: Vec<String> = lock(&self.running)
                    .keys()
                    .map(|uid| format!("`{uid}`"))
                    .collect();
                uids.sort_unstable();
                let running = if uids.is_empty() {
                    "none runs now".to_owned()
                } else {
                    format!("running: {}", uids.join(", "))
                };
                return Err(DataFusionError::Execution(format!(
                    "no query with checkpoints runs the operator of uid `{uid}` (waited {} s for one to start; {running})",
                    START_WAIT.as_secs()
                )));
            }
        }
    }

    /// Asks the running query of `uid` for a savepoint.
    pub async fn savepoint(&self, uid: &str, dir: PathBuf, stop: bool) -> Result<PathBuf> {
        let requests = self.requests(uid).await?;
        let (reply, answer) = oneshot::channel();
        let gone = || {
            DataFusionError::Execution(format!(
                "the query of uid `{uid}` ended before its savepoint was taken"
            ))
        };
        requests
            .send(SavepointRequest { dir, stop, reply })
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}
