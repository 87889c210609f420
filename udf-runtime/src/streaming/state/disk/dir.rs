//! The directory of one run's disk state.
//!
//! A call with a `uid` gets `<root>/<uid>`: the same name in every run, so a second query
//! running the same uid under the same root finds it locked (an error, not a shared store).
//! The lock is a file of its own beside the directory (`<uid>.lock`), held for the run: a
//! run killed while its store was half created leaves a directory no store can open, and
//! only a lock outside it says that nobody uses it any more. Without a uid the name is
//! unique to the run (`<function>-<process id>-<n>`), so two queries of one function never
//! meet.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use datafusion::common::{DataFusionError, Result};

/// Runs of this process so far, for unique directory names.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// A run's state directory; removed when dropped unless `keep`.
#[derive(Debug)]
pub struct StateDir {
    path: PathBuf,
    /// The function whose state it holds.
    function: String,
    keep: bool,
    /// The lock of a uid's directory, held while the run lasts (the file stays: removing it
    /// would let a run waiting on the old file and a run creating a new one both hold it).
    _lock: Option<File>,
}

impl StateDir {
    /// The path for a run of `function` (named by `uid` when it has one) under `root`, which
    /// is created with its parents. A directory an earlier run of the same uid left (kept,
    /// or half written by a run that was killed) is removed once its lock is taken: its
    /// state is not this run's (restoring one is a checkpoint's job). The store creates the
    /// directory itself.
    pub fn create(root: &Path, function: &str, uid: Option<&str>, keep: bool) -> Result<Self> {
        std::fs::create_dir_all(root).map_err(|e| dir_error(root, "cannot be created", e))?;
        let (path, lock) = match uid {
            Some(uid) => {
                let name = safe_name(uid);
                let lock = lock(&root.join(format!("{name}.lock")), &root.join(&name))?;
                (root.join(name), Some(lock))
            }
            None => (
                root.join(format!(
                    "{}-{}-{}",
                    safe_name(function),
                    std::process::id(),
                    RUNS.fetch_add(1, Ordering::Relaxed)
                )),
                None,
            ),
        };
        let dir = StateDir {
            path,
            function: function.to_owned(),
            keep,
            _lock: lock,
        };
        dir.clear_leftover()?;
        Ok(dir)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn function(&self) -> &str {
        &self.function
    }

    /// Removes what an earlier run left (its lock is ours, or its name was unique to it).
    fn clear_leftover(&self) -> Result<()> {
        match std::fs::remove_dir_all(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(dir_error(
                &self.path,
                "is left from an earlier run and cannot be removed",
                e,
            )),
        }
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        if !self.keep {
            // Nothing to report to: a directory that cannot go stays behind.
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Takes the lock of the directory `dir` through the file `path`, without waiting.
fn lock(path: &Path, dir: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| dir_error(dir, "cannot be locked", e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(DataFusionError::Execution(format!(
            "the state directory `{}` is in use by another running query",
            dir.display()
        ))),
        Err(TryLockError::Error(e)) => Err(dir_error(dir, "cannot be locked", e)),
    }
}

/// `name` as one path component: separators and other unusual characters become `_`.
fn safe_name(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    match name.as_str() {
        "" | "." | ".." => format!("_{name}"),
        _ => name,
    }
}

pub(super) fn dir_error(path: &Path, what: &str, cause: std::io::Error) -> DataFusionError {
    DataFusionError::Execution(format!(
        "the state directory `{}` {what}: {cause}",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("udf-dir-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        path
    }

    #[test]
    fn a_uid_names_the_directory_and_runs_without_one_never_share() {
        let root = scratch("names");
        let named = StateDir::create(&root, "f", Some("orders/v1"), false).unwrap();
        assert_eq!(named.path(), root.join("orders_v1"));
        let first = StateDir::create(&root, "My Fn", None, false).unwrap();
        let second = StateDir::create(&root, "My Fn", None, false).unwrap();
        assert_ne!(first.path(), second.path());
        assert!(
            first
                .path()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("My_Fn-")
        );
        assert_eq!(safe_name(".."), "_..");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_directory_goes_with_its_run_unless_kept() {
        let root = scratch("lifetime");
        let gone = StateDir::create(&root, "f", Some("gone"), false).unwrap();
        let kept = StateDir::create(&root, "f", Some("kept"), true).unwrap();
        for dir in [&gone, &kept] {
            std::fs::create_dir_all(dir.path().join("inside")).unwrap();
        }
        let (gone_path, kept_path) = (gone.path().to_owned(), kept.path().to_owned());
        drop(gone);
        drop(kept);
        assert!(!gone_path.exists());
        assert!(kept_path.join("inside").exists());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_root_that_cannot_be_a_directory_is_an_error_naming_it() {
        let root = scratch("file");
        std::fs::write(&root, b"not a directory").unwrap();
        let error = StateDir::create(&root.join("below"), "f", None, false).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("cannot be created"), "{message}");
        assert!(message.contains(&root.display().to_string()), "{message}");
        let _ = std::fs::remove_file(&root);
    }
}
