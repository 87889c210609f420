//! An async scalar function that waits 10 ms per call (a tokio timer), at 10 and 100 calls
//! in flight: throughput against the ceiling C / L, and whether output kept input order.

use std::time::Duration;

use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;

use super::Workload;

/// The latency of one call.
pub const LATENCY: Duration = Duration::from_millis(10);

#[async_scalar_function]
async fn slow_inc(id: i64) -> i64 {
    tokio::time::sleep(LATENCY).await;
    id + 1
}

fn setup(session: &Session, concurrency: &str) -> Result<()> {
    session.register(slow_inc)?;
    session.set_option(
        "table.exec.async-scalar.max-concurrent-operations",
        concurrency,
    )
}

fn setup_10(session: &Session) -> Result<()> {
    setup(session, "10")
}

fn setup_100(session: &Session) -> Result<()> {
    setup(session, "100")
}

pub const ASYNC10: Workload = Workload {
    name: "async10",
    sql: "SELECT slow_inc(id) FROM src",
    setup: setup_10,
    rows: Some(10_000),
    ceiling: Some(10.0 / 0.010),
    check_order: true,
    ..Workload::PLAIN
};

pub const ASYNC100: Workload = Workload {
    name: "async100",
    sql: "SELECT slow_inc(id) FROM src",
    setup: setup_100,
    rows: Some(50_000),
    ceiling: Some(100.0 / 0.010),
    check_order: true,
    ..Workload::PLAIN
};
