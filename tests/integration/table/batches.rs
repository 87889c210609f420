//! Output comes in batches of the session's batch size (never one batch per input row),
//! in input order.

use udf_core::Value;
use udf_examples::table::generate_series::GenerateSeriesFunction;
use udf_runtime::Session;
use udf_runtime::datafusion::prelude::SessionConfig;

use crate::support::{batch, batches_to_rows, column};

fn session(batch_size: usize) -> Session {
    let session = Session::with_config(
        SessionConfig::new()
            .with_batch_size(batch_size)
            .with_target_partitions(1),
    );
    // Upper bounds 10, 0 (emits nothing), 7, 3.
    let bounds = batch(&[
        column("id", "INT", (1..=4).map(Value::Int).collect()),
        column("hi", "INT", [10, 0, 7, 3].map(Value::Int).to_vec()),
    ]);
    session.register_batch("bounds", bounds).unwrap();
    session.register(GenerateSeriesFunction).unwrap();
    session
}

fn expected(left: bool) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for (id, hi) in [(1, 10), (2, 0), (3, 7), (4, 3)] {
        if hi == 0 && left {
            rows.push(vec![Value::Int(id), Value::Null]);
        }
        for i in 1..=hi {
            rows.push(vec![Value::Int(id), Value::Int(i)]);
        }
    }
    rows
}

#[tokio::test]
async fn full_batches_in_input_order() {
    for (join, left) in [(",", false), ("LEFT JOIN", true)] {
        let session = session(4);
        let on = if left { " ON TRUE" } else { "" };
        let sql = format!(
            "SELECT id, f0 FROM bounds {join} LATERAL TABLE(generate_series_function(1, hi)){on}"
        );
        let batches = session.sql(&sql).await.unwrap().collect().await.unwrap();
        let sizes: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
        let total = expected(left).len();
        assert_eq!(sizes.iter().sum::<usize>(), total, "{sql}");
        let (last, full) = sizes.split_last().unwrap();
        assert!(
            full.iter().all(|&n| n == 4) && *last <= 4,
            "{sql}: {sizes:?}"
        );
        assert_eq!(batches_to_rows(&batches), expected(left), "{sql}");
    }
}

static EMITTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[udf_core::prelude::table_function]
fn series(n: i64, out: &mut udf_core::prelude::Collector<i64>) {
    for i in 0..n {
        EMITTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        out.collect(i);
    }
}

/// 200 input rows in one batch, each emitting 100,000 rows: the output of one input batch
/// (20 million rows) is never built all at once. The first batch comes after about one
/// row's output, and dropping the stream stops the calls.
#[tokio::test]
async fn one_input_batch_with_a_huge_fan_out_streams_and_stops_when_dropped() {
    use futures::StreamExt;
    use std::sync::atomic::Ordering;
    let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
    let long = batch(&[column("v", "BIGINT", vec![Value::BigInt(100_000); 200])]);
    session.register_batch("long", long).unwrap();
    session.register(series).unwrap();
    let mut output = session
        .sql("SELECT * FROM long, LATERAL TABLE(series(long.v))")
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let first = tokio::time::timeout(std::time::Duration::from_secs(30), output.next())
        .await
        .expect("the first batch within 30 s")
        .unwrap()
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(first.num_rows(), 8192);
    let emitted = EMITTED.load(Ordering::Relaxed);
    // One input row's output and a batch, not the batch's 20 million.
    assert!(
        emitted <= 100_000 + 8192,
        "{emitted} rows emitted for the first batch"
    );
    for _ in 0..10 {
        output.next().await.unwrap().unwrap();
    }
    let dropping = std::time::Instant::now();
    drop(output);
    let dropped = dropping.elapsed();
    let at_drop = EMITTED.load(Ordering::Relaxed);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(
        EMITTED.load(Ordering::Relaxed),
        at_drop,
        "no call after the drop"
    );
    assert!(at_drop <= 2 * 100_000 + 8192, "{at_drop}");
    // The process's peak resident memory (meaningful when the test runs alone).
    let peak = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(str::to_owned)
        })
        .unwrap_or_default();
    println!(
        "first batch after {waited:?}, {emitted} rows emitted; {at_drop} at the drop, which took {dropped:?}; {peak}"
    );
}
