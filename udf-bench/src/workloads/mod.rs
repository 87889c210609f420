//! The workloads: a query over `src`, the functions it needs, and the baseline it is
//! compared with. Add a module per group of workloads and list them in `ALL`.

mod scalar;

use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;

pub struct Workload {
    pub name: &'static str,
    pub sql: &'static str,
    /// Registers the functions the query calls.
    pub setup: fn(&Session) -> Result<()>,
    /// The workload this one is measured against (`ratio name/baseline`).
    pub baseline: Option<&'static str>,
    /// Output rows per input row.
    pub rows_per_input: u64,
}

impl Workload {
    pub fn expected_rows(&self, input: u64) -> u64 {
        input * self.rows_per_input
    }
}

pub const ALL: &[Workload] = &[scalar::SCALAR, scalar::BUILTIN_EXPR, scalar::PASSTHROUGH];

pub fn find(name: &str) -> Option<&'static Workload> {
    ALL.iter().find(|w| w.name == name)
}

pub fn no_functions(_: &Session) -> Result<()> {
    Ok(())
}
