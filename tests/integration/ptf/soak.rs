//! A long run in bounded memory: a PTF with value state and a timer per key, over millions
//! of rows with four keys that never expire — generated as the query reads them, or sent
//! into a feed by a producer as fast as it can. Resident memory (read from the OS) must stay
//! flat once the run is warm. Measured in a child process, so that other tests' allocations
//! do not count; `UDF_SOAK_ROWS` runs longer.

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
            Ok(ticks(&schema, start, end))
        });
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), batches))
    }
}

/// Rows `start..end` of the input.
fn ticks(schema: &SchemaRef, start: u64, end: u64) -> RecordBatch {
    let ids = (start as i64)..(end as i64);
    let keys: ArrayRef = Arc::new(Int64Array::from_iter_values(ids.clone().map(|i| i % KEYS)));
    let times: ArrayRef =
        Arc::new(udf_core::arrow::array::TimestampMillisecondArray::from_iter_values(ids));
    RecordBatch::try_new(schema.clone(), vec![keys, times]).expect("the schema's columns")
}

/// Where the input comes from.
#[derive(Clone, Copy, Debug)]
enum Input {
    /// Made batch by batch as the query reads it.
    Generated,
    /// Sent into a feed by a producer task as fast as the feed takes it.
    Fed,
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

/// Runs the soak over `rows` rows; the resident memory at 10 %, 50 % and 100 % of the input,
/// and after the output ended.
async fn soak(rows: u64, input: Input) -> [u64; 4] {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", ArrowType::Int64, false),
        Field::new(
            "ts",
            ArrowType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
    ]));
    let made = Arc::new(AtomicU64::new(0));
    let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
    let mut producer = None;
    match input {
        Input::Generated => {
            let generated = Ticks {
                schema: schema.clone(),
                rows,
                made: made.clone(),
            };
            let table = StreamingTable::try_new(schema, vec![Arc::new(generated)])
                .unwrap()
                .with_infinite_table(true);
            session.register_table("ticks", Arc::new(table)).unwrap();
        }
        Input::Fed => {
            let feed = session.register_feed("ticks", schema.clone()).unwrap();
            let made = made.clone();
            producer = Some(tokio::spawn(async move {
                for start in (0..rows).step_by(BATCH as usize) {
                    let end = (start + BATCH).min(rows);
                    feed.send(ticks(&schema, start, end)).await.unwrap();
                    made.store(end, Ordering::Relaxed);
                }
            }));
        }
    }
    session.declare_watermark("ticks", "ts", Duration::ZERO);
    session.register(Watchdog).unwrap();
    let mut output = session
        .sql("SELECT * FROM Watchdog(input => TABLE ticks PARTITION BY k, on_time => DESCRIPTOR(ts))")
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    // Sampled while the input is made or sent (the output is empty until the end, when
    // every timer fires): at 10 %, 50 % and 100 % of it, then once the output has ended.
    let marks = [rows / 10, rows / 2, rows];
    let sampler = tokio::spawn({
        let made = made.clone();
        async move {
            let mut samples = [0; 3];
            let mut next = 0;
            for _ in 0..600_000 {
                while next < 3 && made.load(Ordering::Relaxed) >= marks[next] {
                    samples[next] = resident_bytes();
                    next += 1;
                }
                if next == 3 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            samples
        }
    });
    let mut rows_out = 0;
    while let Some(batch) = output.next().await {
        rows_out += batch.unwrap().num_rows();
    }
    let after = resident_bytes();
    if let Some(producer) = producer {
        producer.await.unwrap();
    }
    let [ten, half, all] = sampler.await.unwrap();
    assert_eq!(rows_out, KEYS as usize, "one timeout per key at the end");
    [ten, half, all, after]
}

fn soak_rows() -> u64 {
    std::env::var("UDF_SOAK_ROWS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3_000_000)
}

fn child(name: &str, input: Input) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let [ten, half, all, after] = runtime.block_on(soak(soak_rows(), input));
    println!(
        "soak {name} rows={} rss_10={ten} rss_50={half} rss_100={all} rss_after={after}",
        soak_rows()
    );
}

/// Runs test `name` in a child process and checks the resident memory it reports is flat.
fn in_child(name: &str) {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &format!("ptf::soak::{name}"), "--nocapture"])
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
    let ten = figure("rss_10");
    let peak = ["rss_50", "rss_100", "rss_after"]
        .map(figure)
        .into_iter()
        .max();
    // Flat: from 10 % of the input on, resident memory grows by less than 16 MiB (about 5
    // bytes per row of the default run; the input alone is 16 bytes per row).
    assert!(peak.unwrap() < ten + (16 << 20), "{line}");
}

#[test]
fn a_long_run_with_timers_and_four_keys_keeps_memory_flat() {
    if std::env::var_os("UDF_SOAK_CHILD").is_some() {
        return child("generated", Input::Generated);
    }
    in_child("a_long_run_with_timers_and_four_keys_keeps_memory_flat");
}

#[test]
fn a_producer_faster_than_its_query_is_held_back_by_the_feed() {
    if std::env::var_os("UDF_SOAK_CHILD").is_some() {
        return child("fed", Input::Fed);
    }
    in_child("a_producer_faster_than_its_query_is_held_back_by_the_feed");
}
