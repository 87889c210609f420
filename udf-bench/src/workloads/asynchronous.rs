//! An async scalar function that waits 10 ms per call (a tokio timer), at 10 and 100 calls
//! in flight: throughput against the nominal ceiling C / L, against the ideal schedule of the
//! same calls written by hand, and whether output kept input order.

use std::time::Duration;

use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::error::{DataFusionError, Result};
use udf_runtime::datafusion::prelude::SessionContext;

use super::{CustomRun, Workload};
use crate::source::Drained;

/// The nominal latency of one call.
pub const LATENCY: Duration = Duration::from_millis(10);

/// What one call does; the function and the hand-written schedule share it.
async fn wait_and_inc(id: i64) -> i64 {
    tokio::time::sleep(LATENCY).await;
    id + 1
}

#[async_scalar_function]
async fn slow_inc(id: i64) -> i64 {
    wait_and_inc(id).await
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

const ROWS_10: u64 = 10_000;
const ROWS_100: u64 = 50_000;

pub const ASYNC10: Workload = Workload {
    name: "async10",
    sql: "SELECT slow_inc(id) FROM src",
    setup: setup_10,
    baseline: Some("async10_ideal"),
    rows: Some(ROWS_10),
    ceiling: Some(10.0 / LATENCY.as_secs_f64()),
    check_order: true,
    ..Workload::PLAIN
};

pub const ASYNC100: Workload = Workload {
    name: "async100",
    sql: "SELECT slow_inc(id) FROM src",
    setup: setup_100,
    baseline: Some("async100_ideal"),
    rows: Some(ROWS_100),
    ceiling: Some(100.0 / LATENCY.as_secs_f64()),
    check_order: true,
    ..Workload::PLAIN
};

pub const ASYNC10_IDEAL: Workload = Workload {
    name: "async10_ideal",
    rows: Some(ROWS_10),
    custom: Some(ideal_10),
    ..Workload::PLAIN
};

pub const ASYNC100_IDEAL: Workload = Workload {
    name: "async100_ideal",
    rows: Some(ROWS_100),
    custom: Some(ideal_100),
    ..Workload::PLAIN
};

fn ideal_10(_: SessionContext, _: usize) -> CustomRun {
    Box::pin(ideal(ROWS_10, 10))
}

fn ideal_100(_: SessionContext, _: usize) -> CustomRun {
    Box::pin(ideal(ROWS_100, 100))
}

/// The best any executor can do with the same calls: `concurrency` tasks, each awaiting its
/// share of the calls one after the other, so a call starts the moment one ends. No input is
/// read and no order is kept; what it measures is the timer's real latency.
async fn ideal(rows: u64, concurrency: u64) -> Result<Drained> {
    let workers = (0..concurrency).map(|worker| {
        tokio::spawn(async move {
            let mut done = 0u64;
            for id in (worker..rows).step_by(concurrency as usize) {
                std::hint::black_box(wait_and_inc(id as i64).await);
                done += 1;
            }
            done
        })
    });
    let done = futures::future::try_join_all(workers)
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
    Ok(Drained {
        rows: done.iter().sum(),
        out_of_order: 0,
    })
}
