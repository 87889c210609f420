//! The workloads: a query over `src`, the functions it needs, and the baseline it is
//! compared with. Add a module per group of workloads and list them in `ALL`.

mod aggregate;
mod asynchronous;
mod ballista;
mod ptf;
mod ptf_ckpt;
mod ptf_disk;
mod scalar;
mod table;

#[cfg(test)]
mod round_trip;

use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;
use udf_runtime::datafusion::prelude::SessionContext;

pub use asynchronous::LATENCY as ASYNC_LATENCY;

pub struct Workload {
    pub name: &'static str,
    pub sql: &'static str,
    /// Registers the functions the query calls (and sets the options it needs).
    pub setup: fn(&Session) -> Result<()>,
    /// The workload this one is measured against (`ratio name/baseline`).
    pub baseline: Option<&'static str>,
    /// Output rows for a given number of input rows.
    pub expected_rows: fn(u64) -> u64,
    /// Whether the output must have exactly `expected_rows` rows (event-time workloads over
    /// several partitions may legitimately emit fewer).
    pub check_rows: bool,
    /// An input size of its own (`--rows` does not apply).
    pub rows: Option<u64>,
    /// The rate no implementation can beat, in input rows per second, given the function's
    /// nominal latency (`fraction` of it is printed).
    pub ceiling: Option<f64>,
    /// The output's first column must count up by one from row to row: rows out of order
    /// are counted and printed.
    pub check_order: bool,
    /// Runs the workload by hand instead of through `sql` (hand-written baselines), given
    /// the number of partitions.
    pub custom: Option<fn(SessionContext, usize) -> CustomRun>,
    /// Reads this fed table (with these columns) instead of `src`: the ids are sent into it
    /// while the query runs.
    pub fed: Option<(&'static str, crate::fed::Shape)>,
    /// The uid whose checkpoint figures are printed.
    pub checkpointed: Option<&'static str>,
    /// Measures a savepoint and a restore of this many keys instead (`fed::restore`).
    pub restore_keys: Option<u64>,
    /// Runs on a Ballista cluster of a scheduler and two executors on this machine
    /// (`cluster.rs`), reading `src` from Parquet files: the functions the scheduler and
    /// executors carry for it (`setup` also makes the client's views and options).
    pub cluster: Option<fn(&Session) -> Result<()>>,
    /// Reads `src` from the Parquet files the cluster reads, on the local session.
    pub files: bool,
}

/// A hand-written run: what it drained.
pub type CustomRun =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<crate::source::Drained>> + Send>>;

impl Workload {
    /// No input size of its own, no ceiling, no order check.
    pub const PLAIN: Workload = Workload {
        name: "",
        sql: "",
        setup: no_functions,
        baseline: None,
        expected_rows: same_rows,
        check_rows: true,
        rows: None,
        ceiling: None,
        check_order: false,
        custom: None,
        fed: None,
        checkpointed: None,
        restore_keys: None,
        cluster: None,
        files: false,
    };
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
    aggregate::AGG_STREAM,
    aggregate::AGG_STREAM_1M,
    aggregate::AGG_STREAM_DISK_1M,
    aggregate::TUMBLE_AGG,
    aggregate::TUMBLE_AGG_1M,
    aggregate::TUMBLE_AGG_DISK_1M,
    aggregate::SESSION_AGG_1M,
    aggregate::SESSION_AGG_DISK_1M,
    aggregate::OVER_1M,
    aggregate::OVER_DISK_1M,
    table::SPLIT,
    table::SPLIT_BUILTIN,
    asynchronous::ASYNC10,
    asynchronous::ASYNC100,
    asynchronous::ASYNC10_IDEAL,
    asynchronous::ASYNC100_IDEAL,
    ptf::PTF_COUNTER,
    ptf::PTF_COUNTER_HANDWRITTEN,
    ptf::PTF_TIMER,
    ptf::PTF_TIMER_EVERY_ROW,
    ptf::PTF_ORDER_BY,
    ptf::PTF_ORDER_BY_TIMER,
    ptf::PTF_TWO_TABLES,
    ptf_disk::PTF_COUNTER_DISK,
    ptf_disk::PTF_COUNTER_10M,
    ptf_disk::PTF_COUNTER_DISK_10M,
    ptf_disk::PTF_MAPVIEW,
    ptf_disk::PTF_MAPVIEW_DISK,
    ptf_ckpt::PTF_COUNTER_FED,
    ptf_ckpt::PTF_COUNTER_CKPT,
    ptf_ckpt::PTF_COUNTER_FED_1M,
    ptf_ckpt::PTF_COUNTER_CKPT_1M,
    ptf_ckpt::PTF_TIMER_FED,
    ptf_ckpt::PTF_TIMER_CKPT,
    ptf_ckpt::PTF_RESTORE_1M,
    ballista::SCALAR_BALLISTA,
    ballista::AGG_BALLISTA,
    ballista::PTF_COUNTER_BALLISTA,
    ballista::TUMBLE_AGG_BALLISTA,
    ballista::SCALAR_FILES,
    ballista::AGG_FILES,
    ballista::PTF_COUNTER_FILES,
    ballista::TUMBLE_AGG_FILES,
];

pub use ptf::register_counter;

pub fn find(name: &str) -> Option<&'static Workload> {
    ALL.iter().find(|w| w.name == name)
}

pub fn no_functions(_: &Session) -> Result<()> {
    Ok(())
}
