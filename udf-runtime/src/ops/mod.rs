//! The operators DataFusion has no concept of, one folder each with its call, logical node,
//! exec, SQL binding and DataFrame method: lateral table-function joins, table aggregates,
//! process table functions, the updating GROUP BY over streams and changelogs, windows, and OVER windows over streams.
//! `routing/` routes rows to the processors of the keyed ones with their watermarks;
//! `indices.rs` lends reused buffers to Arrow's `take`; `integer_keys.rs` is the key table of
//! their GROUP BY on one small integer key.

pub(crate) mod indices;
pub(crate) mod integer_keys;
pub mod lateral;
pub mod over;
pub mod ptf;
pub mod routing;
pub mod sink;
pub mod table_aggregate;
pub mod updating_aggregate;
pub mod window;
