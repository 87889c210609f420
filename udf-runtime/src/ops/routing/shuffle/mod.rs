//! Watermarks across a cluster's shuffle. A processor's watermark is the minimum over the
//! source partitions of its table (rule 25 of docs/semantics.md), and every processor hears
//! every source's watermark, whether or not the source sends it rows. A cluster's hash
//! shuffle carries rows only, so before it each source stamps its rows (`stamp_exec.rs`):
//!
//! | column            | type  | a row                    | a watermark advance | a source's end |
//! |-------------------|-------|--------------------------|---------------------|----------------|
//! | `__udf_route`     | Int64 | its processor's route    | one per processor   | one per processor |
//! | `__udf_source`    | UInt32| the source partition     | the same            | the same       |
//! | `__udf_mark`      | Int8  | `ROW`                    | `ADVANCE`           | `END`          |
//! | `__udf_watermark` | Int64 | the watermark before it  | the new watermark   | the source count |
//!
//! The table's own columns come first, made nullable (a marker has no values). The shuffle
//! hash-partitions on `__udf_route`, whose values are picked so DataFusion's partitioner sends
//! each to its processor (`routes.rs`), and keys go to the processors the local router would
//! pick. After the shuffle each processor turns its rows back into the messages the local
//! router sends (`unstamp.rs`). A shuffle keeps each source's rows in order, so a source's
//! marks arrive after the rows before them.

mod routes;
mod stamp_exec;
mod unstamp;

#[cfg(test)]
mod tests;

pub(crate) use routes::routes;
pub use stamp_exec::ShuffleStampExec;
pub(crate) use stamp_exec::{stamp_routing_to, stamped_sources};
pub(crate) use unstamp::Unstamp;

/// The column the shuffle partitions on.
pub const ROUTE: &str = "__udf_route";
const SOURCE: &str = "__udf_source";
const MARK: &str = "__udf_mark";
const WATERMARK: &str = "__udf_watermark";

/// The stamp columns after a table's own.
const STAMP_COLUMNS: usize = 4;

const ROW: i8 = 0;
const ADVANCE: i8 = 1;
const END: i8 = 2;
