//! Table aggregates, in one place: grouping and emitting rows independent of the engine
//! (`aggregation.rs`), the call and logical node (`node.rs`), the exec (`exec.rs`), the SQL
//! form `f(TABLE t PARTITION BY k)` (`binding.rs`) and the DataFrame form `flat_aggregate`
//! (`dataframe.rs`).

pub mod aggregation;
pub mod binding;
mod dataframe;
pub(crate) mod exec;
mod node;

pub use dataframe::{FlatAggregate, GroupedDataFrame};
pub use exec::TableAggregateExec;
pub use node::{TableAggregateCall, TableAggregateNode};
