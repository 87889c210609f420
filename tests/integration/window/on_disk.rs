//! Window aggregates on the disk backend with more groups in open windows than the memory
//! budget holds: groups move out to the store and back in while their window is open, a
//! window that fires emits those on disk too, and the rows are the ones the in-memory
//! backend gives.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use udf_core::arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use udf_runtime::Session;
use udf_runtime::datafusion::datasource::MemTable;

use super::streaming::schema;
use crate::support;

/// Every built-in, DISTINCT and FILTER among them, per key and window.
fn query(window: &str) -> String {
    format!(
        "SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS lo, \
         MAX(v) AS hi, AVG(v) AS m, COUNT(DISTINCT v) AS d, SUM(v) FILTER (WHERE v > 20) AS big \
         FROM TABLE({window}) GROUP BY window_start, window_end, k"
    )
}

const TUMBLE: &str = "TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)";
const HOP: &str = "HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)";

/// `rows` rows 2 ms apart, each up to 1.5 s out of order, over `keys` random keys; in
/// batches of 500.
fn events(rows: usize, keys: u64) -> Vec<RecordBatch> {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut k = Vec::with_capacity(rows);
    let mut v = Vec::with_capacity(rows);
    let mut ts = Vec::with_capacity(rows);
    for row in 0..rows {
        k.push(format!("k{}", next() % keys));
        v.push((next() % 40) as i64);
        ts.push(row as i64 * 2 + (next() % 1500) as i64);
    }
    let whole = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(StringArray::from(k)),
            Arc::new(Int64Array::from(v)),
            Arc::new(TimestampMillisecondArray::from(ts)),
        ],
    )
    .unwrap();
    (0..rows)
        .step_by(500)
        .map(|start| whole.slice(start, 500.min(rows - start)))
        .collect()
}

/// A session of `partitions` partitions over `batches` with the watermark 2 s behind, on
/// the disk backend under `root` with `budget` when given.
fn session_over(
    batches: &[RecordBatch],
    partitions: usize,
    disk: Option<(&std::path::Path, &str)>,
) -> Session {
    let session = support::session_of(partitions);
    session.set_option("state.backend.type", "hashmap").unwrap();
    if let Some((root, budget)) = disk {
        support::use_disk(&session, root, budget);
    }
    let table = MemTable::try_new(schema(), vec![batches.to_vec()]).unwrap();
    session.register_table("events", Arc::new(table)).unwrap();
    session.declare_watermark("events", "ts", Duration::from_secs(2));
    session
}

/// The rows as text, sorted (groups of a window come in any order).
pub(super) async fn sorted(session: &Session, sql: &str) -> Vec<String> {
    sorted_text(support::rows(session, sql).await)
}

/// `rows` as text, a line each, sorted.
fn sorted_text(rows: Vec<Vec<udf_core::Value>>) -> Vec<String> {
    let mut rows: Vec<String> = rows
        .iter()
        .map(|row| {
            let values: Vec<String> = row.iter().map(ToString::to_string).collect();
            values.join(" ")
        })
        .collect();
    rows.sort();
    rows
}

fn scratch(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("udf-window-disk-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    root
}

#[tokio::test]
async fn window_groups_beyond_the_budget_move_to_disk_and_fire_from_there() {
    // 24,000 rows over 48 s: 10 s windows of about 1,800 groups each of 2,000 keys, two or
    // three windows open at a time; a partition holds several hundred groups at these
    // budgets.
    let batches = events(24_000, 2_000);
    for (name, window, partitions, budget) in
        [("tumble", TUMBLE, 1, "256 kb"), ("hop", HOP, 2, "448 kb")]
    {
        let sql = query(window);
        let root = scratch(&format!("{name}-{partitions}"));
        let in_memory = sorted(&session_over(&batches, partitions, None), &sql).await;
        let on_disk_session = session_over(&batches, partitions, Some((&root, budget)));
        let on_disk = sorted(&on_disk_session, &sql).await;
        assert!(in_memory.len() > 8_000, "{}", in_memory.len());
        assert_eq!(
            on_disk.len(),
            in_memory.len(),
            "{name}, {partitions} partitions: as many window rows"
        );
        // Not `assert_eq!`: thousands of rows would flood the report.
        assert!(
            on_disk == in_memory,
            "{name}, {partitions} partitions: the same window rows"
        );

        let moved = support::groups_moved(&on_disk_session, &sql).await;
        support::assert_groups_moved(moved, 3_000.0, &root, name);
    }
}

/// With a budget that holds them all, no group moves.
#[tokio::test]
async fn window_groups_within_the_budget_stay_in_memory() {
    let batches = events(4_000, 50);
    let root = scratch("within");
    let session = session_over(&batches, 1, Some((&root, "64 mb")));
    let sql = query(TUMBLE);
    let expected = sorted(&session_over(&batches, 1, None), &sql).await;
    assert_eq!(sorted(&session, &sql).await, expected);
    let (out, _, text) = support::groups_moved(&session, &sql).await;
    assert_eq!(out, 0.0, "{text}");
    let _ = std::fs::remove_dir_all(&root);
}

/// `rows` are `expected`, in order; else the first that differs, named (not `assert_eq!`:
/// thousands of rows would flood the report).
fn same_rows(rows: &[String], expected: &[String], what: &str) {
    let differs = (0..rows.len().max(expected.len())).find(|&at| rows.get(at) != expected.get(at));
    if let Some(at) = differs {
        panic!(
            "{what}: row {at} is {:?}, expected {:?} ({} rows, {} expected)",
            rows.get(at),
            expected.get(at),
            rows.len(),
            expected.len()
        );
    }
}

/// Sessions per key — merged as rows bridge them, closed 3 s after a key's last row — with
/// every built-in that merges.
const SESSIONS: &str = "SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s, \
     MIN(v) AS lo, MAX(v) AS hi, AVG(v) AS m FROM TABLE(SESSION(TABLE events PARTITION BY k, \
     DESCRIPTOR(ts), INTERVAL '3' SECOND)) GROUP BY window_start, window_end, k";

#[tokio::test]
async fn open_sessions_beyond_the_budget_move_to_disk_and_close_from_there() {
    // 24,000 rows over 48 s of 2,000 keys: a row of a key every 4 s or so, often within 3 s
    // of the key's last (sessions merge), up to 1.5 s out of order (rows bridge sessions).
    // About a thousand sessions are open at a time.
    let batches = events(24_000, 2_000);
    for (partitions, budget) in [(1, "200 kb"), (2, "1 kb")] {
        let root = scratch(&format!("sessions-{partitions}"));
        let in_memory = sorted(&session_over(&batches, partitions, None), SESSIONS).await;
        let on_disk_session = session_over(&batches, partitions, Some((&root, budget)));
        let on_disk = sorted(&on_disk_session, SESSIONS).await;
        // `start end k n ...`, each time a date and a time of day.
        let merged = in_memory
            .iter()
            .filter(|row| row.split(' ').nth(5).is_some_and(|n| n != "1"))
            .count();
        assert!(merged > 3_000, "sessions of several rows: {merged}");
        assert_eq!(on_disk.len(), in_memory.len(), "{partitions} partitions");
        same_rows(
            &on_disk,
            &in_memory,
            &format!("{partitions} partitions at {budget}"),
        );

        let moved = support::groups_moved(&on_disk_session, SESSIONS).await;
        let what = format!("{partitions} partitions");
        support::assert_groups_moved(moved, 2_000.0, &root, &what);
    }
}

/// Per key: the last 5 s of event time, and the last four rows.
const OVER: [&str; 2] = [
    "SELECT k, v, ts, COUNT(*) OVER w AS n, SUM(v) OVER w AS s, MAX(v) OVER w AS hi FROM events \
     WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW)",
    "SELECT k, v, ts, MIN(v) OVER w AS lo, AVG(v) OVER w AS m FROM events \
     WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)",
];

/// `sql` over `batches` sent through a feed (the watermark 2 s behind) on `partitions`
/// partitions, on the disk backend under `root` with `budget` when given: its rows, sorted,
/// and the plan with its metrics once the feed closed.
async fn over_a_feed(
    batches: &[RecordBatch],
    partitions: usize,
    disk: Option<(&std::path::Path, &str)>,
    sql: &str,
) -> (Vec<String>, String) {
    use udf_runtime::datafusion::physical_plan::display::DisplayableExecutionPlan;
    use udf_runtime::datafusion::physical_plan::execute_stream;

    let session = support::session_of(partitions);
    session.set_option("state.backend.type", "hashmap").unwrap();
    if let Some((root, budget)) = disk {
        support::use_disk(&session, root, budget);
    }
    let feed = session.register_feed("events", schema()).unwrap();
    session.declare_watermark("events", "ts", Duration::from_secs(2));
    let plan = session
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let output = execute_stream(plan.clone(), session.context().task_ctx()).unwrap();
    let received = support::through_feed(feed, batches, output, Duration::from_secs(60)).await;
    let rows = sorted_text(support::batches_to_rows(&received));
    let text = DisplayableExecutionPlan::with_metrics(plan.as_ref())
        .indent(true)
        .to_string();
    (rows, text)
}

#[tokio::test]
async fn over_window_keys_beyond_the_budget_move_to_disk_with_their_frames() {
    // 2,000 keys, a row of each every 4 s or so: most keys wait idle between their rows, with
    // a row or a few in their frames.
    let batches = events(24_000, 2_000);
    for sql in OVER {
        for (partitions, budget) in [(1, "200 kb"), (2, "1 kb")] {
            let root = scratch(&format!("over-{partitions}"));
            let (in_memory, _) = over_a_feed(&batches, partitions, None, sql).await;
            let (on_disk, plan) =
                over_a_feed(&batches, partitions, Some((&root, budget)), sql).await;
            let late = support::metric(&plan, "late_rows_dropped");
            assert_eq!(
                in_memory.len() + late as usize,
                24_000,
                "every row goes out or is late"
            );
            let what = format!("{partitions} partitions at {budget}: {sql}");
            same_rows(&on_disk, &in_memory, &what);
            let moved = (
                support::metric(&plan, "groups_moved_out"),
                support::metric(&plan, "groups_moved_in"),
                plan,
            );
            support::assert_groups_moved(moved, 2_000.0, &root, &what);
        }
    }
}
