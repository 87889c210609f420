//! Table aggregates in the engine: a logical node (`TableAggregate`), its exec, and the call
//! the DataFrame API and SQL build it from.

mod exec;
mod node;

pub use exec::TableAggregateExec;
pub use node::{TableAggregateCall, TableAggregateNode};
