//! The workloads: a query over `src`, the functions it needs, and the baseline it is
//! compared with. Add a module per group of workloads and list them in `ALL`.

mod aggregate;
mod scalar;
mod table;

use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;

pub struct Workload {
    pub name: &'static str,
    pub sql: &'static str,
    /// Registers the functions the query calls.
    pub setup: fn(&Session) -> Result<()>,
    /// The workload this one is measured against (`ratio name/baseline`).
    pub baseline: Option<&'static str>,
    /// Output rows for a given number of input rows.
    pub expected_rows: fn(u64) -> u64,
}

/// One output row per input row.
pub fn same_rows(rows: u64) -> u64 {
    rows
}

pub const ALL: &[Workload] = &[
    scalar::SCALAR,
    scalar::BUILTIN_EXPR,
    scalar::PASSTHROUGH,
    aggregate::AGG,
    aggregate::AGG_BUILTIN,
    table::SPLIT,
    table::SPLIT_BUILTIN,
];

pub fn find(name: &str) -> Option<&'static Workload> {
    ALL.iter().find(|w| w.name == name)
}

pub fn no_functions(_: &Session) -> Result<()> {
    Ok(())
}
