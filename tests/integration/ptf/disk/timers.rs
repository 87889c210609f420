//! Timers on disk: keys move out with their pending timers, and the timers a watermark makes
//! due bring their keys back a chunk at a time to fire. Many keys each holding a timer run
//! within the memory budget and every timer fires once, in the in-memory backend's order.
//! `UDF_DISK_TIMER_KEYS=10000000` runs ten million keys (with `UDF_DISK_CHILD_SECONDS=1800`
//! and `--release`: it takes minutes).

use std::sync::Arc;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use udf_core::Value;
use udf_core::arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, TimestampMillisecondArray};
use udf_core::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::catalog::streaming::StreamingTable;
use udf_runtime::datafusion::execution::{SendableRecordBatchStream, TaskContext};
use udf_runtime::datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use udf_runtime::datafusion::physical_plan::streaming::PartitionStream;
use udf_runtime::datafusion::prelude::SessionConfig;

use super::{
    in_child, is_child, peak_resident_bytes, reset_peak_resident, resident_bytes, scratch, use_disk,
};
use crate::support::{Backend, rows, use_backend};

const BATCH: u64 = 8192;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Opened {
    at: i64,
}

#[derive(SqlRow)]
struct Open {
    close: i64,
}

#[derive(SqlRow)]
struct Closed {
    opened: i64,
    fired: i64,
}

/// Each key opens once, at its row's time, and closes at the row's `close`: its row
/// registers a named timer; the timer emits when the key opened and when it closed, and
/// leaves nothing behind.
#[derive(Clone, Copy, Debug, Default)]
struct Deadlines;

#[ptf(name = "Deadlines")]
impl Deadlines {
    fn eval(
        &self,
        ctx: &mut Context,
        #[state] opened: &mut Opened,
        #[argument(set_semantic_table, require_on_time)] input: Open,
        out: &mut Collector<Closed>,
    ) {
        let _ = out;
        let mut time = ctx.time_context();
        opened.at = time.time_millis().expect("on_time");
        time.register_on_time_millis("close", input.close);
    }

    fn on_timer(
        &self,
        ctx: &mut OnTimerContext,
        #[state] opened: &mut Opened,
        out: &mut Collector<Closed>,
    ) {
        let fired = ctx.time_context().time_millis().expect("a timer's time");
        out.collect(Closed {
            opened: opened.at,
            fired,
        });
        ctx.clear_all_state();
    }
}

/// `opens(k, ts, close)`: `keys` rows, row `i` of key `i` at `i` ms, closing `delay` ms
/// later, made as the query reads them.
#[derive(Debug)]
struct Opens {
    schema: SchemaRef,
    keys: u64,
    delay: i64,
}

impl PartitionStream for Opens {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (schema, keys, delay) = (self.schema.clone(), self.keys, self.delay);
        let batches = futures::stream::iter((0..keys).step_by(BATCH as usize)).map(move |start| {
            let ids = (start as i64)..((start + BATCH).min(keys) as i64);
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from_iter_values(ids.clone())),
                Arc::new(TimestampMillisecondArray::from_iter_values(ids.clone())),
                Arc::new(Int64Array::from_iter_values(ids.map(|i| i + delay))),
            ];
            Ok(RecordBatch::try_new(schema.clone(), columns).expect("the schema's columns"))
        });
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), batches))
    }
}

/// A session over `opens`, its watermark the latest row's time.
fn session(keys: u64, delay: i64) -> Session {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
        Field::new("close", DataType::Int64, false),
    ]));
    let source = Opens {
        schema: schema.clone(),
        keys,
        delay,
    };
    let table = StreamingTable::try_new(schema, vec![Arc::new(source)]).unwrap();
    let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
    session.register_table("opens", Arc::new(table)).unwrap();
    session.declare_watermark("opens", "ts", std::time::Duration::ZERO);
    session.register(Deadlines).unwrap();
    session
}

const QUERY: &str = "SELECT k, opened, fired FROM Deadlines(input => TABLE opens PARTITION BY k, on_time => DESCRIPTOR(ts))";

#[tokio::test]
async fn timers_on_disk_fire_as_they_do_in_memory() {
    // A quarter of the keys pending at a time: most fire as the watermark passes them, the
    // last quarter at the end of the input.
    let (keys, delay) = (20_000, 5_000);
    let mut results = Vec::new();
    for backend in Backend::ALL {
        let session = session(keys, delay);
        use_backend(&session, backend);
        results.push(rows(&session, QUERY).await);
    }
    // Worked out here: every timer fires once, in time order.
    let expected: Vec<Vec<Value>> = (0..keys as i64)
        .map(|k| vec![Value::BigInt(k), Value::BigInt(k), Value::BigInt(k + delay)])
        .collect();
    assert_eq!(results[0], expected, "in memory");
    assert_eq!(results[1], expected, "on disk, in the same order");
}

/// The memory budget of the large run.
const BUDGET: u64 = 8 << 20;
/// What the run may take beyond the budget, over the process's memory after a warm-up run
/// (which holds the test binary's code and DataFusion's runtime): batches in flight, the
/// store's threads and buffers, and the check of which keys fired (a bit per key).
const OVERHEAD: u64 = 32 << 20;

fn keys() -> u64 {
    std::env::var("UDF_DISK_TIMER_KEYS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400_000)
}

/// Runs the query over `keys` keys; how many timers fired, how many keys fired more than
/// once, and how many fired at the wrong time.
async fn run(keys: u64, name: &str) -> [u64; 3] {
    let root = scratch(name);
    // Every key's timer is pending at the end of the input.
    let delay = keys as i64;
    let session = session(keys, delay);
    use_disk(&session, &root, &format!("{BUDGET} b"));
    let mut output = session
        .sql(QUERY)
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    let mut seen = vec![0u64; keys.div_ceil(64) as usize];
    let (mut fired, mut twice, mut wrong) = (0u64, 0u64, 0u64);
    while let Some(batch) = output.next().await {
        let batch = batch.unwrap();
        let column = |i: usize| {
            batch
                .column(i)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone()
        };
        let (k, opened, at) = (column(0), column(1), column(2));
        for row in 0..batch.num_rows() {
            let key = k.value(row) as u64;
            let (word, bit) = ((key / 64) as usize, key % 64);
            twice += (seen[word] >> bit) & 1;
            seen[word] |= 1 << bit;
            wrong += u64::from(opened.value(row) != k.value(row))
                + u64::from(at.value(row) != k.value(row) + delay);
        }
        fired += k.len() as u64;
    }
    let _ = std::fs::remove_dir_all(&root);
    [fired, twice, wrong]
}

/// The child's part: a warm-up run, then the large one.
async fn many_timers_figures() {
    run(20_000, "timers-warm-up").await;
    let baseline = resident_bytes();
    reset_peak_resident();
    let keys = keys();
    let started = std::time::Instant::now();
    let [fired, twice, wrong] = run(keys, "many-timers").await;
    println!(
        "figures keys={keys} fired={fired} twice={twice} wrong={wrong} baseline={baseline} peak={} millis={}",
        peak_resident_bytes(),
        started.elapsed().as_millis()
    );
}

#[test]
fn keys_with_pending_timers_beyond_the_budget_each_fire_once() {
    if is_child() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        return runtime.block_on(many_timers_figures());
    }
    let figures = in_child("timers::keys_with_pending_timers_beyond_the_budget_each_fire_once");
    let keys = figures.get("keys");
    // Resident, a key with state and a timer is counted as 256 bytes or more.
    assert!(
        keys * 256 >= 4 * BUDGET,
        "{keys} keys fit in 4 × the budget"
    );
    assert_eq!(figures.get("fired"), keys, "a timer fired per key");
    assert_eq!(figures.get("twice"), 0, "no timer fired twice");
    assert_eq!(
        figures.get("wrong"),
        0,
        "every timer at its time, with its state"
    );
    let (baseline, peak) = (figures.get("baseline"), figures.get("peak"));
    assert!(
        peak < baseline + BUDGET + OVERHEAD,
        "peak resident memory {peak} bytes, over {baseline} before the run + the budget {BUDGET} + {OVERHEAD}"
    );
}
