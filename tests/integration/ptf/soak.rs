//! A long run in bounded memory: a PTF with value state and a timer per key, over a
//! generated input of millions of rows with four keys that never expire. Resident memory
//! (read from the OS) must stay flat once the run is warm. Measured in a child process, so
//! that other tests' allocations do not count; `UDF_SOAK_ROWS` runs longer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use udf_core::arrow::array::{ArrayRef, Int64Array, RecordBatch};
use udf_core::arrow::datatypes::{DataType as ArrowType, Field, Schema, SchemaRef, TimeUnit};
use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::catalog::streaming::StreamingTable;
use udf_runtime::datafusion::execution::{SendableRecordBatchStream, TaskContext};
use udf_runtime::datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use udf_runtime::datafusion::physical_plan::streaming::PartitionStream;
use udf_runtime::datafusion::prelude::SessionConfig;

const BATCH: u64 = 8192;
const KEYS: i64 = 4;

/// `ticks(k BIGINT, ts TIMESTAMP(3))`: row `i` has key `i % 4` and time `i` ms, made batch by
/// batch as the query reads them (nothing of the input is kept).
#[derive(Debug)]
struct Ticks {
    schema: SchemaRef,
    rows: u64,
    made: Arc<AtomicU64>,
}

impl PartitionStream for Ticks {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (schema, rows, made) = (self.schema.clone(), self.rows, self.made.clone());
        let batches = futures::stream::iter((0..rows).step_by(BATCH as usize)).map(move |start| {
            let end = (start + BATCH).min(rows);
            made.store(end, Ordering::Relaxed);
            let ids = (start as i64)..(end as i64);
            let keys: ArrayRef =
                Arc::new(Int64Array::from_iter_values(ids.clone().map(|i| i % KEYS)));
            let times: ArrayRef =
                Arc::new(udf_core::arrow::array::TimestampMillisecondArray::from_iter_values(ids));
            Ok(RecordBatch::try_new(schema.clone(), vec![keys, times])?)
        });
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), batches))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Seen {
    rows: i64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Watchdog;

/// Counts a key's rows and keeps pushing its timeout 5 s past the latest row: with rows
/// every few milliseconds, a timer fires only at the end of the input.
#[ptf(name = "Watchdog")]
impl Watchdog {
    fn eval(
        &self,
        ctx: &mut Context,
        #[state] seen: &mut Seen,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<i64>,
    ) {
        let _ = (input, out);
        seen.rows += 1;
        let mut time = ctx.time_context();
        let now = time.time_millis().expect("on_time");
        time.register_on_time_millis("timeout", now + 5000);
    }

    fn on_timer(&self, #[state] seen: &mut Seen, out: &mut Collector<i64>) {
        out.collect(seen.rows);
    }
}

/// Resident memory of this process in bytes (Linux `/proc/self/statm`).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("resident pages");
    pages * 4096
}

/// Runs the soak over `rows` rows; the resident memory at 10 %, 50 % and 100 % of the input.
async fn soak(rows: u64) -> [u64; 3] {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", ArrowType::Int64, false),
        Field::new(
            "ts",
            ArrowType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
    ]));
    let made = Arc::new(AtomicU64::new(0));
    let ticks = Ticks {
        schema: schema.clone(),
        rows,
        made: made.clone(),
    };
    let table = StreamingTable::try_new(schema, vec![Arc::new(ticks)])
        .unwrap()
        .with_infinite_table(true);
    let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
    session.register_table("ticks", Arc::new(table)).unwrap();
    session.declare_watermark("ticks", "ts", Duration::ZERO);
    session.register(Watchdog).unwrap();
    let mut output = session
        .sql("SELECT * FROM Watchdog(input => TABLE ticks PARTITION BY k, on_time => DESCRIPTOR(ts))")
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    let mut samples = [0; 3];
    let marks = [rows / 10, rows / 2];
    let mut next_mark = 0;
    let mut emitted = Vec::new();
    // The output is empty until the end (every timer fires then), so the input is sampled
    // while the stream is polled: each poll reads one more input batch.
    let sampler = tokio::spawn({
        let made = made.clone();
        async move {
            let mut samples = [0; 2];
            let mut next = 0;
            for _ in 0..600_000 {
                if next < 2 && made.load(Ordering::Relaxed) >= marks[next] {
                    samples[next] = resident_bytes();
                    next += 1;
                }
                if next == 2 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            samples
        }
    });
    while let Some(batch) = output.next().await {
        let batch = batch.unwrap();
        let counts = batch.column(batch.num_columns() - 2).clone();
        emitted.push(counts);
        next_mark += 1;
    }
    let _ = next_mark;
    samples[2] = resident_bytes();
    let [ten, half] = sampler.await.unwrap();
    samples[0] = ten;
    samples[1] = half;
    let rows_out: usize = emitted.iter().map(|c| c.len()).sum();
    assert_eq!(rows_out, KEYS as usize, "one timeout per key at the end");
    samples
}

fn soak_rows() -> u64 {
    std::env::var("UDF_SOAK_ROWS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3_000_000)
}

#[test]
fn a_long_run_with_timers_and_four_keys_keeps_memory_flat() {
    if std::env::var_os("UDF_SOAK_CHILD").is_some() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let [ten, half, end] = runtime.block_on(soak(soak_rows()));
        println!("soak rss_10={ten} rss_50={half} rss_100={end}");
        return;
    }
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "ptf::soak::a_long_run_with_timers_and_four_keys_keeps_memory_flat",
            "--nocapture",
        ])
        .env("UDF_SOAK_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("soak "))
        .expect("the child's figures");
    println!("{line}");
    let figure = |name: &str| -> u64 {
        line.split_whitespace()
            .find_map(|part| part.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .expect(name)
    };
    let (ten, end) = (figure("rss_10"), figure("rss_100"));
    // Flat: from 10 % to the end of the input, resident memory grows by less than 16 MiB
    // (about 5 bytes per row here; growth with the input was about 25 bytes per row).
    assert!(end < ten + (16 << 20), "{line}");
}
