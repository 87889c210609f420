//! Checkpoints: a query's state, timers and source positions saved as a consistent cut,
//! from which a later run resumes (docs/architecture.md, "Checkpoints").
//!
//! The coordinator of a run (`coordinator.rs`) triggers a checkpoint; each source emits a
//! barrier after the rows it read before it (`source.rs`; file scans read file by file to
//! know where they stand, `file_source.rs`); the plan between the sources and
//! the stateful operator is run so that barriers keep their place (`region.rs`, `stateless.rs`,
//! and the plans allowed, `rule.rs`); a processor holds back what comes after a source's barrier until all
//! have come, then saves its keyed-state unit (`barrier.rs`); once every source and processor
//! has answered, the manifest is written last (`manifest.rs`, `files.rs`) and the checkpoint
//! is complete. Settings use Flink's keys (`config.rs`); the running queries of a session are
//! found by uid (`jobs.rs`) for savepoints and statistics. Keyed operators other than process
//! table functions (table aggregates, the updating GROUP BY, window aggregates:
//! `keyed_execs.rs`) run under checkpoints through `operator.rs`.

pub mod barrier;
pub mod config;
pub mod coordinator;
pub mod file_source;
pub mod files;
pub mod jobs;
pub mod keyed_execs;
pub mod manifest;
pub mod operator;
pub mod region;
pub mod rule;
pub mod source;
pub mod stateless;

/// The guarded value even if a thread panicked holding it: checkpoint bookkeeping stays
/// readable, and a checkpoint under way then fails or times out on its own.
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
