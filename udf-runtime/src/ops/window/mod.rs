//! Windows: Flink's window table functions `TUMBLE`, `HOP`, `CUMULATE` and `SESSION` in FROM
//! (`binding.rs`, which windows a time holds in `spec.rs`), as a relation of their own
//! (`tvf_node.rs`, `tvf_exec.rs`) and, grouped by `window_start, window_end`, as a window
//! aggregate that emits each window once when the watermark passes its end
//! (`aggregate_node.rs`, `aggregate_exec.rs`, the open windows of one processor in
//! `aggregation.rs`: fixed ones in `panes.rs`, sessions in `sessions.rs`); the loop such
//! event-time operators share (`processor.rs`, OVER windows over a stream use it too) and the
//! clock windows are cut on (`clock.rs`), and under checkpoints the open windows a checkpoint
//! saves (`snapshot.rs`). With the disk backend the groups of fixed windows beyond the memory
//! budget wait on disk (`panes_on_disk.rs`; which stay in memory: `pane_residency.rs`), and so
//! do the open sessions of keys beyond it (`sessions_on_disk.rs`, `session_residency.rs`).

pub mod aggregate_exec;
pub mod aggregate_node;
mod aggregation;
pub mod binding;
mod clock;
mod keys_on_disk;
mod pane_residency;
mod panes;
pub(crate) mod panes_on_disk;
pub(crate) mod processor;
mod session_residency;
mod sessions;
mod sessions_on_disk;
mod snapshot;
pub mod spec;
pub mod tvf_exec;
pub mod tvf_node;

pub(crate) use aggregate_exec::WindowAggregate;
pub use aggregate_exec::WindowAggregateExec;
pub use aggregate_node::WindowAggregateNode;
pub use tvf_exec::WindowTvfExec;
pub use tvf_node::WindowTvfNode;
