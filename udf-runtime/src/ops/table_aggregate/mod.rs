//! Table aggregates, in one place: grouping and emitting rows independent of the engine
//! (`aggregation.rs`), the call and logical node (`node.rs`), the exec (`exec.rs`), the SQL
//! form `f(TABLE t PARTITION BY k)` (`binding.rs`) and the DataFrame form `flat_aggregate`
//! (`dataframe.rs`); with checkpoints, a changelog over unbounded input routed by group key
//! (`checkpointed.rs`) and its accumulators saved (`snapshot.rs`); with the disk backend, a
//! changelog's groups beyond the memory budget on disk (`on_disk.rs`, `residency.rs`).

pub mod aggregation;
mod batches;
pub mod binding;
mod checkpointed;
mod dataframe;
pub(crate) mod exec;
mod node;
mod on_disk;
mod residency;
mod snapshot;

pub use dataframe::{FlatAggregate, GroupedDataFrame};
pub use exec::TableAggregateExec;
pub use node::{TableAggregateCall, TableAggregateNode};
