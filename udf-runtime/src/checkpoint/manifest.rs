//! A checkpoint on disk: a directory `<dir>/<uid>/chk-<id>` (a savepoint:
//! `<savepoint dir>/savepoint-<uid>-<id>`) holding one state file per processor and, written
//! last, `_manifest`, which names every file with its length and checksum. A checkpoint
//! without a manifest — cut short by a crash — is never used.

use std::fs;
use std::path::{Path, PathBuf};

use datafusion::common::{DataFusionError, Result, exec_err};
use serde::{Deserialize, Serialize};

use super::files;

/// Changes whenever the layout below does.
const FORMAT: u32 = 2;
pub const MANIFEST: &str = "_manifest";
const CHECKPOINT_PREFIX: &str = "chk-";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub format: u32,
    pub id: u64,
    /// The `uid` of the process table function whose state this is.
    pub uid: String,
    pub function: String,
    pub savepoint: bool,
    /// Wall-clock time the checkpoint was triggered (epoch ms).
    pub triggered_at: i64,
    /// Every source's position, in the order the operator numbers its sources.
    pub sources: Vec<SourcePosition>,
    /// One file per processor, in processor order.
    pub processors: Vec<StateFile>,
    /// The output files of a committing sink that this checkpoint commits.
    pub sink: Vec<SinkFile>,
}

/// An output file written before the checkpoint: complete once renamed to `committed`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SinkFile {
    pub in_progress: PathBuf,
    pub committed: PathBuf,
}

/// Where a source stood when its barrier left it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SourcePosition {
    /// The table it reads (a fed table's name).
    pub table: String,
    pub partition: usize,
    /// Rows read before the barrier: the position to resume at.
    pub rows: u64,
    /// The largest row time seen before the barrier (the watermark is computed from it).
    pub max_time: Option<i64>,
    /// Of a file scan: the file its partition was reading and the rows read of it.
    pub file: Option<FilePosition>,
}

/// Where in its files a partition of a file scan stood.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FilePosition {
    /// The file's place among the partition's files.
    pub index: usize,
    pub path: String,
    /// Rows read of the file.
    pub rows: u64,
    /// A CRC-32 of the paths of the partition's files before it: a restore checks that the
    /// same files come first.
    pub before: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StateFile {
    pub name: String,
    pub bytes: u64,
    pub checksum: u32,
}

impl Manifest {
    pub fn new(id: u64, uid: &str, function: &str, savepoint: bool, triggered_at: i64) -> Self {
        Manifest {
            format: FORMAT,
            id,
            uid: uid.to_owned(),
            function: function.to_owned(),
            savepoint,
            triggered_at,
            sources: Vec::new(),
            processors: Vec::new(),
            sink: Vec::new(),
        }
    }

    /// Renames every output file of the checkpoint into place; a file already there is left
    /// (committing again after a crash is harmless).
    pub fn commit_output(&self) -> Result<()> {
        for file in &self.sink {
            if file.committed.exists() || !file.in_progress.exists() {
                continue;
            }
            fs::rename(&file.in_progress, &file.committed).map_err(|e| {
                DataFusionError::Execution(format!(
                    "checkpoint {}: output file {} could not be committed as {}: {e}",
                    self.id,
                    file.in_progress.display(),
                    file.committed.display()
                ))
            })?;
            if let Some(dir) = file.committed.parent() {
                files::sync_dir(dir)?;
            }
        }
        Ok(())
    }

    /// The size of the checkpoint's state files.
    pub fn state_bytes(&self) -> u64 {
        self.processors.iter().map(|f| f.bytes).sum()
    }

    /// The position of `table`'s rows (the sum over its partitions).
    pub fn position(&self, table: &str) -> Option<u64> {
        let mut found = self.sources.iter().filter(|s| s.table == table).peekable();
        found.peek()?;
        Some(found.map(|s| s.rows).sum())
    }
}

/// Where the checkpoints of the function with `uid` go.
pub fn checkpoints_of(dir: &Path, uid: &str) -> PathBuf {
    dir.join(uid)
}

pub fn checkpoint_dir(dir: &Path, uid: &str, id: u64) -> PathBuf {
    checkpoints_of(dir, uid).join(format!("{CHECKPOINT_PREFIX}{id}"))
}

pub fn savepoint_dir(dir: &Path, uid: &str, id: u64) -> PathBuf {
    dir.join(format!("savepoint-{uid}-{id}"))
}

/// Writes the manifest: the checkpoint in `dir` is complete once this returns.
pub fn commit(dir: &Path, manifest: &Manifest) -> Result<()> {
    let bytes = postcard::to_stdvec(manifest).map_err(|e| {
        DataFusionError::Execution(format!("a checkpoint manifest could not be encoded: {e}"))
    })?;
    files::write(&dir.join(MANIFEST), &bytes)
}

/// A complete checkpoint, its files checked.
#[derive(Debug, Clone)]
pub struct Complete {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

impl Complete {
    /// Reads the checkpoint in `dir`: an error naming what is missing or broken.
    pub fn read(dir: &Path) -> Result<Complete> {
        let path = dir.join(MANIFEST);
        if !path.exists() {
            return exec_err!(
                "{} is not a complete checkpoint: it has no {MANIFEST} (a checkpoint cut short is never used)",
                dir.display()
            );
        }
        let bytes = files::read(&path)?;
        let manifest: Manifest = postcard::from_bytes(&bytes).map_err(|e| {
            DataFusionError::Execution(format!(
                "checkpoint manifest {} does not read: {e}",
                path.display()
            ))
        })?;
        if manifest.format != FORMAT {
            return exec_err!(
                "checkpoint {} has format {}, this build reads format {FORMAT}",
                dir.display(),
                manifest.format
            );
        }
        for file in &manifest.processors {
            let path = dir.join(&file.name);
            let length = fs::metadata(&path).map(|m| m.len()).map_err(|e| {
                DataFusionError::Execution(format!(
                    "checkpoint {} lacks its state file {}: {e}",
                    dir.display(),
                    file.name
                ))
            })?;
            if length != file.bytes {
                return exec_err!(
                    "checkpoint {}: state file {} has {length} bytes, its manifest says {}",
                    dir.display(),
                    file.name,
                    file.bytes
                );
            }
        }
        Ok(Complete {
            dir: dir.to_owned(),
            manifest,
        })
    }

    /// The state of processor `processor`, its checksum checked.
    pub fn state(&self, processor: usize) -> Result<Vec<u8>> {
        let file = &self.manifest.processors[processor];
        let payload = files::read(&self.dir.join(&file.name))?;
        if files::crc32(&payload) != file.checksum {
            return exec_err!(
                "checkpoint {}: state file {} is not the one its manifest names",
                self.dir.display(),
                file.name
            );
        }
        Ok(payload)
    }

    /// Checks every state file's checksum (reading them all).
    fn verify(&self) -> Result<()> {
        (0..self.manifest.processors.len()).try_for_each(|p| self.state(p).map(drop))
    }
}

/// The checkpoint `path` names for the function with `uid`: a checkpoint or savepoint
/// directory itself, or a directory of checkpoints (`<dir>` or `<dir>/<uid>`), of which the
/// newest complete one whose files all check is taken.
pub fn resolve(path: &Path, uid: &str) -> Result<Complete> {
    if path.join(MANIFEST).exists() {
        let complete = Complete::read(path)?;
        complete.verify()?;
        return Ok(complete);
    }
    let mut candidates = ids(path)?;
    if candidates.is_empty() {
        candidates = ids(&checkpoints_of(path, uid))?;
    }
    if candidates.is_empty() {
        return exec_err!(
            "execution.state-recovery.path {} holds no checkpoint (no {MANIFEST}, no chk-<id> directories here or under {uid}/)",
            path.display()
        );
    }
    let mut problems = Vec::new();
    for (_, dir) in candidates.iter().rev() {
        match Complete::read(dir).and_then(|c| c.verify().map(|()| c)) {
            Ok(complete) => return Ok(complete),
            Err(error) => problems.push(error.to_string()),
        }
    }
    exec_err!(
        "no complete checkpoint in {}: {}",
        path.display(),
        problems.join("; ")
    )
}

/// The checkpoint directories in `dir`, by id.
pub fn ids(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return exec_err!("checkpoint directory {} does not read: {e}", dir.display());
        }
    };
    let mut found: Vec<(u64, PathBuf)> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name();
            let id = name
                .to_str()?
                .strip_prefix(CHECKPOINT_PREFIX)?
                .parse()
                .ok()?;
            Some((id, entry.path()))
        })
        .collect();
    found.sort_unstable_by_key(|(id, _)| *id);
    Ok(found)
}

/// Removes all but the newest `keep` complete checkpoints in `dir`, and the incomplete ones
/// older than the newest complete one (a crash or a failure left them).
pub fn retain(dir: &Path, keep: usize) -> Result<()> {
    let all = ids(dir)?;
    let complete: Vec<u64> = all
        .iter()
        .filter(|(_, path)| path.join(MANIFEST).exists())
        .map(|(id, _)| *id)
        .collect();
    let Some(&newest) = complete.last() else {
        return Ok(());
    };
    let kept = &complete[complete.len().saturating_sub(keep)..];
    for (id, path) in all {
        if id < newest && !kept.contains(&id) {
            fs::remove_dir_all(&path).map_err(|e| {
                DataFusionError::Execution(format!(
                    "old checkpoint {} could not be removed: {e}",
                    path.display()
                ))
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("udf-manifest-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn checkpoint(root: &Path, id: u64, state: &[u8], complete: bool) -> PathBuf {
        let dir = checkpoint_dir(root, "counts", id);
        fs::create_dir_all(&dir).unwrap();
        files::write(&dir.join("state-0"), state).unwrap();
        if complete {
            let mut manifest = Manifest::new(id, "counts", "Counter", false, 0);
            manifest.processors.push(StateFile {
                name: "state-0".into(),
                bytes: fs::metadata(dir.join("state-0")).unwrap().len(),
                checksum: files::crc32(state),
            });
            manifest.sources.push(SourcePosition {
                table: "t".into(),
                partition: 0,
                rows: id * 10,
                max_time: None,
                file: None,
            });
            commit(&dir, &manifest).unwrap();
        }
        dir
    }

    #[test]
    fn the_newest_complete_checkpoint_is_found_and_damaged_ones_are_passed_over() {
        let root = temp("resolve");
        checkpoint(&root, 1, b"one", true);
        let two = checkpoint(&root, 2, b"two", true);
        checkpoint(&root, 3, b"three", false);
        let found = resolve(&root, "counts").unwrap();
        assert_eq!(found.manifest.id, 2);
        assert_eq!(found.state(0).unwrap(), b"two");
        assert_eq!(found.manifest.position("t"), Some(20));
        assert_eq!(found.manifest.position("other"), None);

        // A truncated state file: checkpoint 1 is taken, with the reason 2 was not.
        let state = two.join("state-0");
        let bytes = fs::read(&state).unwrap();
        fs::write(&state, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(resolve(&root, "counts").unwrap().manifest.id, 1);
        let error = resolve(&two, "counts").unwrap_err().to_string();
        assert!(error.contains("state-0 has"), "{error}");

        // Nothing usable: one error naming every problem.
        let one = checkpoint_dir(&root, "counts", 1);
        fs::write(one.join(MANIFEST), b"UDFCKPT1 garbage").unwrap();
        let error = resolve(&root, "counts").unwrap_err().to_string();
        assert!(
            error.starts_with("Execution error: no complete checkpoint in"),
            "{error}"
        );
        assert!(
            error.contains("not a checkpoint file") && error.contains("state-0 has"),
            "{error}"
        );

        let error = resolve(&root.join("nowhere"), "counts")
            .unwrap_err()
            .to_string();
        assert!(error.contains("holds no checkpoint"), "{error}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn retention_keeps_the_newest_complete_checkpoints() {
        let root = temp("retain");
        for id in 1..=5 {
            checkpoint(&root, id, b"s", id != 2);
        }
        checkpoint(&root, 6, b"s", false);
        let dir = checkpoints_of(&root, "counts");
        retain(&dir, 2).unwrap();
        let left: Vec<u64> = ids(&dir).unwrap().into_iter().map(|(id, _)| id).collect();
        // 4 and 5 complete, 6 still under way.
        assert_eq!(left, [4, 5, 6]);
        fs::remove_dir_all(&root).unwrap();
    }
}
