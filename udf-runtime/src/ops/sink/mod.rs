//! The committing file sink: `INSERT INTO` a CSV or Parquet table with checkpoints on. Each
//! partition writes its rows into a hidden in-progress file; at a barrier the file is
//! finished (synced) and handed to the checkpoint, and only once the checkpoint's manifest
//! is written is it renamed into the table's directory (`checkpoint/barrier.rs`). Readers of
//! the directory never see a partial file, and after a crash the restored query commits what
//! its checkpoint covers and removes the rest, so each row is committed once
//! (docs/architecture.md, "Checkpoints").

pub mod exec;
mod input;

pub use input::passes as sink_input_passes;
mod part_file;
