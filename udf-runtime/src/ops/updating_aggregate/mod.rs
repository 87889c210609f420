//! The updating GROUP BY: a GROUP BY over a stream or a changelog, which emits a changelog
//! of its results as Flink's `GroupAggFunction` does — `+I` for a new group, `-U` old / `+U`
//! new when a row changes a group's result, nothing when the result stays the same, `-D`
//! when retraction empties a group. The logical node and its checks (`node.rs`), the
//! aggregate calls it computes (`calls.rs`), what it asks of their accumulators
//! (`aggregator.rs`), the built-ins' accumulators (`builtins.rs`), DISTINCT (`distinct.rs`), the per-partition
//! aggregation row by row in vectorized rounds (`aggregation.rs`; the rounds: `rounds.rs`; its
//! buffers, kept from batch to batch: `scratch.rs`), the exec (`exec.rs`), and
//! under checkpoints a partition as a keyed operator (`checkpointed.rs`) whose live groups a
//! checkpoint saves (`snapshot.rs`; the built-ins' saved shapes in `saved.rs`, with
//! `value_counts.rs` for MIN/MAX and DISTINCT). With the disk backend the groups beyond the
//! memory budget wait on disk in their saved form (`on_disk.rs`; which stay in memory:
//! `residency.rs`).

mod aggregation;
pub(crate) mod aggregator;
mod builtins;
pub(crate) mod calls;
mod checkpointed;
mod distinct;
pub mod exec;
pub mod node;
pub(crate) mod on_disk;
pub(crate) mod residency;
mod rounds;
mod saved;
mod scratch;
mod snapshot;
mod value_counts;

pub use exec::UpdatingAggregateExec;
pub use node::UpdatingAggregateNode;
pub(crate) use node::call;
pub(crate) use snapshot::key_columns;
