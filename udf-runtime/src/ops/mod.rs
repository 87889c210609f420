//! The operators DataFusion has no concept of, one folder each with its call, logical node,
//! exec, SQL binding and DataFrame method: lateral table-function joins, table aggregates,
//! process table functions, the updating GROUP BY over streams and changelogs, windows, and OVER windows over streams.

pub mod lateral;
pub mod over;
pub mod ptf;
pub mod sink;
pub mod table_aggregate;
pub mod updating_aggregate;
pub mod window;
