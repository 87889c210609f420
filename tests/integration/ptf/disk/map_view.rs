//! A `MapView` far larger than the memory budget (the seed's "Large State" promise): every
//! entry is read and written in the store one by one, so the run completes with its peak
//! resident memory under the budget plus a fixed overhead, and gives the in-memory backend's
//! results. `UDF_DISK_MAP_PAIRS` runs a bigger map.

use std::sync::Arc;

use futures::StreamExt;
use udf_core::Value;
use udf_core::arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringBuilder};
use udf_core::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
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
use crate::support::{Backend, metric, rows, use_backend};

const BATCH: u64 = 8192;
/// Partition keys; each holds a map of `pairs / KEYS` entries.
const KEYS: u64 = 1_000;
/// Bytes of each map key (an event name).
const EVENT_BYTES: usize = 100;

#[derive(SqlRow)]
struct Event {
    k: i64,
    event: String,
}

/// How many times the key has seen each event (the seed's HistoryFunction): one `MapView` get
/// and one put per row.
#[ptf(name = "EventCounts")]
fn event_counts(
    #[state] seen: &mut MapView<String, i64>,
    #[argument(set_semantic_table)] input: Event,
    out: &mut Collector<i64>,
) {
    let count = seen.get(input.event.as_str()).copied().unwrap_or(0) + 1;
    seen.put(input.event, count);
    out.collect(count);
}

/// `events(k, event)`: `pairs` distinct (key, event) pairs, every one twice — all of them,
/// then all again — made batch by batch as the query reads them (nothing is kept).
#[derive(Debug)]
struct Events {
    schema: SchemaRef,
    pairs: u64,
}

impl PartitionStream for Events {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (schema, pairs) = (self.schema.clone(), self.pairs);
        let rows = 2 * pairs;
        let batches = futures::stream::iter((0..rows).step_by(BATCH as usize))
            .map(move |start| Ok(events(&schema, pairs, start, (start + BATCH).min(rows))));
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), batches))
    }
}

/// Rows `start..end`: row `i` is pair `i % pairs`, of key `pair % KEYS`, its event the pair's
/// number padded to `EVENT_BYTES`.
fn events(schema: &SchemaRef, pairs: u64, start: u64, end: u64) -> RecordBatch {
    let pair = (start..end).map(|i| i % pairs);
    let keys: ArrayRef = Arc::new(Int64Array::from_iter_values(
        pair.clone().map(|p| (p % KEYS) as i64),
    ));
    let mut names = StringBuilder::with_capacity((end - start) as usize, EVENT_BYTES * 8192);
    for p in pair {
        names.append_value(format!("{p:-<width$}", width = EVENT_BYTES));
    }
    let names: ArrayRef = Arc::new(names.finish());
    RecordBatch::try_new(schema.clone(), vec![keys, names]).expect("the schema's columns")
}

fn session(pairs: u64, partitions: usize) -> Session {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("event", DataType::Utf8, false),
    ]));
    let source = Events {
        schema: schema.clone(),
        pairs,
    };
    let table = StreamingTable::try_new(schema, vec![Arc::new(source)]).unwrap();
    let session = Session::with_config(SessionConfig::new().with_target_partitions(partitions));
    session.register_table("events", Arc::new(table)).unwrap();
    session.register(event_counts).unwrap();
    session
}

const QUERY: &str = "SELECT * FROM EventCounts(input => TABLE events PARTITION BY k)";

#[tokio::test]
async fn a_map_view_on_disk_gives_the_results_in_memory() {
    let pairs = 20_000;
    let sorted = |mut rows: Vec<Vec<Value>>| {
        rows.sort_by_key(|row| format!("{row:?}"));
        rows
    };
    let mut results = Vec::new();
    for backend in Backend::ALL {
        let session = session(pairs, 2);
        use_backend(&session, backend);
        results.push(sorted(rows(&session, QUERY).await));
    }
    assert_eq!(results[0], results[1], "on disk as in memory");
    // Worked out here: each pair counted 1 in the first round, 2 in the second.
    let mut expected: Vec<Vec<Value>> = (0..2 * pairs)
        .map(|i| {
            let count = if i < pairs { 1 } else { 2 };
            vec![
                Value::BigInt(((i % pairs) % KEYS) as i64),
                Value::BigInt(count),
            ]
        })
        .collect();
    expected = sorted(expected);
    assert_eq!(results[0], expected);
}

/// The items in use stay in memory: a map that fits the cache never reads or writes the
/// store, and one that does not reads back only the entries it wrote out (the first round's
/// entries are new, known missing without a read).
#[tokio::test]
async fn map_entries_in_use_are_served_from_memory() {
    let pairs = 20_000u64;
    for (budget, fits) in [("64 mb", true), ("4 mb", false)] {
        let root = scratch(&format!("item-cache-{fits}"));
        let session = session(pairs, 1);
        use_disk(&session, &root, budget);
        let analyzed = rows(&session, &format!("EXPLAIN ANALYZE {QUERY}")).await;
        let plan = format!("{analyzed:?}");
        let (hits, misses) = (
            metric(&plan, "state_item_cache_hits"),
            metric(&plan, "state_item_cache_misses"),
        );
        assert_eq!(hits + misses, (2 * pairs) as f64, "a read per row\n{plan}");
        let written = metric(&plan, "state_bytes_written");
        if fits {
            assert_eq!((misses, written), (0.0, 0.0), "{plan}");
        } else {
            assert!(written > 0.0, "{plan}");
            assert!(
                misses > 0.0 && misses <= pairs as f64,
                "only second sights read the store\n{plan}"
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// The memory budget of the large run.
const BUDGET: u64 = 20 << 20;
/// What the run may take beyond the budget, over the process's memory after a small warm-up
/// run (which holds the test binary's code, 80 MiB of it in a debug build, and DataFusion's
/// runtime): the input and output batches in flight and the store's threads and buffers
/// (measured: 16 MiB with 800,000 pairs and a 24 MiB budget).
const OVERHEAD: u64 = 32 << 20;

fn pairs() -> u64 {
    std::env::var("UDF_DISK_MAP_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(650_000)
}

/// Runs the query over `pairs` pairs with the budget (one processor: a hash repartition in
/// front of two would buffer input that the test does not mean to measure); the rows, the
/// sum of their counts, how many counts were 2, and the bytes the store left on disk (kept
/// for the count).
async fn run(pairs: u64, name: &str) -> [u64; 4] {
    let root = scratch(name);
    let session = session(pairs, 1);
    use_disk(&session, &root, &format!("{BUDGET} b"));
    session
        .set_option("state.backend.fjall.keep-directory", "true")
        .unwrap();
    let mut output = session
        .sql(QUERY)
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    let (mut rows, mut sum, mut seconds) = (0u64, 0u64, 0u64);
    while let Some(batch) = output.next().await {
        let batch = batch.unwrap();
        let counts = batch.column(batch.num_columns() - 1);
        let counts = counts.as_any().downcast_ref::<Int64Array>().unwrap();
        rows += counts.len() as u64;
        sum += counts.values().iter().map(|&c| c as u64).sum::<u64>();
        seconds += counts.values().iter().filter(|&&c| c == 2).count() as u64;
    }
    drop(output);
    let on_disk = disk_usage(&root);
    let _ = std::fs::remove_dir_all(&root);
    [rows, sum, seconds, on_disk]
}

/// Bytes the files under `dir` take on disk (blocks, not lengths: the store's journal is
/// made long and sparse).
fn disk_usage(dir: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => disk_usage(&entry.path()),
            Ok(meta) => meta.blocks() * 512,
            Err(_) => 0,
        })
        .sum()
}

/// The child's part: a warm-up run, then the large one; prints what the large one saw and
/// the memory it took.
async fn large_map_figures() {
    run(20_000, "warm-up").await;
    let baseline = resident_bytes();
    reset_peak_resident();
    let pairs = pairs();
    let started = std::time::Instant::now();
    let [rows, sum, seconds, on_disk] = run(pairs, "large-map").await;
    println!(
        "figures pairs={pairs} rows={rows} sum={sum} seconds={seconds} on_disk={on_disk} baseline={baseline} peak={} millis={}",
        peak_resident_bytes(),
        started.elapsed().as_millis()
    );
}

#[test]
fn a_map_view_four_times_the_budget_stays_within_it() {
    if is_child() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        return runtime.block_on(large_map_figures());
    }
    let figures = in_child("map_view::a_map_view_four_times_the_budget_stays_within_it");
    let pairs = figures.get("pairs");
    // In memory each entry is at least its key's bytes, a String and a count.
    let in_memory = pairs * (EVENT_BYTES + std::mem::size_of::<(String, i64)>()) as u64;
    assert!(
        in_memory >= 4 * BUDGET,
        "the map needs {in_memory} bytes in memory, at least 4 × the budget"
    );
    assert_eq!(figures.get("rows"), 2 * pairs, "a row per input row");
    assert_eq!(figures.get("seconds"), pairs, "every entry read back once");
    assert_eq!(
        figures.get("sum"),
        3 * pairs,
        "1 for each first sight, 2 for each second"
    );
    // Each entry's store key holds its key and event bytes; compressed and compacted, the
    // store takes less than that a entry, journal included.
    let on_disk = figures.get("on_disk");
    assert!(
        on_disk > 0 && on_disk < pairs * (EVENT_BYTES as u64 + 32),
        "{on_disk} bytes on disk for {pairs} entries"
    );
    let (baseline, peak) = (figures.get("baseline"), figures.get("peak"));
    assert!(
        peak < baseline + BUDGET + OVERHEAD,
        "peak resident memory {peak} bytes, over {baseline} before the run + the budget {BUDGET} + {OVERHEAD}"
    );
}
