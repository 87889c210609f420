//! Keys beyond the memory budget are moved out to the store and read back when their rows
//! come again, with the results of the in-memory backend; the run's directory is locked
//! while it runs and removed after it unless kept.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use udf_core::Value;
use udf_core::arrow::array::{Int64Array, RecordBatch};
use udf_core::arrow::datatypes::{DataType, Field, Schema};
use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::datasource::MemTable;
use udf_runtime::datafusion::prelude::SessionConfig;

use super::{in_child_ignoring_file_size_signal, is_child, limit_file_size, scratch, use_disk};
use crate::support::{batches_to_rows, error, metric, rows};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Seen {
    rows: i64,
    total: i64,
}

#[derive(SqlRow)]
struct Tally {
    rows: i64,
    total: i64,
}

#[derive(SqlRow)]
struct Reading {
    k: i64,
    v: i64,
}

/// The key's rows so far and the sum of their values.
#[ptf(name = "Tallies")]
fn tallies(
    #[state] seen: &mut Seen,
    #[argument(set_semantic_table)] input: Reading,
    out: &mut Collector<Tally>,
) {
    seen.rows += 1;
    seen.total += input.v;
    out.collect(Tally {
        rows: seen.rows,
        total: seen.total,
    });
}

const KEYS: i64 = 3_000;
const ROUNDS: i64 = 3;

/// `readings(k, v)`: every key once per round, `v` the row number, in batches of 500 rows.
fn session(partitions: usize) -> Session {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
    ]));
    let rows = KEYS * ROUNDS;
    let batches = (0..rows)
        .step_by(500)
        .map(|start| {
            let v: Vec<i64> = (start..(start + 500).min(rows)).collect();
            let k: Vec<i64> = v.iter().map(|v| v % KEYS).collect();
            RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(Int64Array::from(k)), Arc::new(Int64Array::from(v))],
            )
            .unwrap()
        })
        .collect();
    let session = Session::with_config(SessionConfig::new().with_target_partitions(partitions));
    let table = MemTable::try_new(schema, vec![batches]).unwrap();
    session.register_table("readings", Arc::new(table)).unwrap();
    session.register(tallies).unwrap();
    session
}

/// What every row must give, worked out here: (key, rows so far, their total), sorted.
fn expected() -> Vec<Vec<Value>> {
    let mut expected: Vec<Vec<Value>> = (0..KEYS * ROUNDS)
        .map(|v| {
            let (k, round) = (v % KEYS, v / KEYS);
            let total: i64 = (0..=round).map(|r| r * KEYS + k).sum();
            vec![
                Value::BigInt(k),
                Value::BigInt(round + 1),
                Value::BigInt(total),
            ]
        })
        .collect();
    expected.sort_by_key(|row| format!("{row:?}"));
    expected
}

fn sorted(mut rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    rows.sort_by_key(|row| format!("{row:?}"));
    rows
}

const QUERY: &str =
    "SELECT k, \"rows\", total FROM Tallies(input => TABLE readings PARTITION BY k)";

#[tokio::test]
async fn keys_beyond_the_budget_go_to_disk_and_come_back_with_the_same_results() {
    for partitions in [1, 2] {
        let in_memory = sorted(rows(&session(partitions), QUERY).await);
        assert_eq!(in_memory, expected(), "{partitions} processors, in memory");

        let root = scratch(&format!("budget-{partitions}"));
        let session = session(partitions);
        // Under 100 keys' worth: most of the 3,000 keys live on disk between their rows.
        use_disk(&session, &root, "25600 b");
        assert_eq!(
            sorted(rows(&session, QUERY).await),
            in_memory,
            "{partitions} processors, on disk"
        );

        let analyzed = rows(&session, &format!("EXPLAIN ANALYZE {QUERY}")).await;
        let plan = format!("{:?}", analyzed);
        let evictions = metric(&plan, "state_evictions");
        let misses = metric(&plan, "state_cache_misses");
        // Every key is moved out between its rounds and read back for the next two.
        let keys = KEYS as f64;
        assert!(evictions >= 2.0 * keys, "{evictions} evictions\n{plan}");
        assert!(misses >= 2.0 * keys, "{misses} keys read back\n{plan}");
        assert!(metric(&plan, "state_bytes_written") > 0.0, "{plan}");
        // At most the budget's 100 keys stay between batches (the gauge sums processors).
        assert!(metric(&plan, "state_keys_peak") <= 100.0, "{plan}");
        let left: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
        assert!(
            left.is_empty(),
            "a finished run's store is removed: {left:?}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}

#[tokio::test]
async fn a_kept_store_stays_and_a_store_in_use_cannot_be_opened_twice() {
    let root = scratch("kept");
    let session = session(1);
    use_disk(&session, &root, "25600 b");
    session
        .set_option("state.backend.fjall.keep-directory", "true")
        .unwrap();
    let kept = "SELECT k FROM Tallies(input => TABLE readings PARTITION BY k, uid => 'tallies-v1')";
    assert_eq!(rows(&session, kept).await.len(), (KEYS * ROUNDS) as usize);
    assert!(
        root.join("tallies-v1").is_dir(),
        "kept under the uid's name"
    );

    // A query over a fed table holds its store while it runs.
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
    ]));
    let feed = session.register_feed("fed", schema.clone()).unwrap();
    let held = "SELECT k FROM Tallies(input => TABLE fed PARTITION BY k, uid => 'held')";
    let plan = session
        .sql(held)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let mut running =
        udf_runtime::datafusion::physical_plan::execute_stream(plan, session.task_ctx()).unwrap();
    let one = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(Int64Array::from(vec![1])),
        ],
    )
    .unwrap();
    feed.send(one).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), running.next())
        .await
        .expect("a row within 10 s")
        .expect("a batch")
        .unwrap();
    assert_eq!(batches_to_rows(&[first]), vec![vec![Value::BigInt(1)]]);

    let message = error(&session, &held.replace("TABLE fed", "TABLE readings")).await;
    assert!(
        message.contains("is in use by another running query"),
        "{message}"
    );
    assert!(
        message.contains(&root.join("held").display().to_string()),
        "{message}"
    );
    drop(feed);
    drop(running);
    let _ = std::fs::remove_dir_all(&root);
}

#[tokio::test]
async fn a_directory_that_cannot_be_made_is_a_query_error_naming_it() {
    let root = scratch("file");
    std::fs::write(&root, b"a file where the directory should be").unwrap();
    let session = session(1);
    use_disk(&session, &root.join("below"), "1 mb");
    let message = error(&session, QUERY).await;
    assert!(message.contains("cannot be created"), "{message}");
    assert!(message.contains(&root.display().to_string()), "{message}");
    let _ = std::fs::remove_file(&root);
}

#[tokio::test]
async fn backend_settings_are_checked_when_set() {
    let session = session(1);
    let message = session
        .sql("SET 'state.backend.type' = 'rocksdb'")
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.contains("`rocksdb` is no state backend"),
        "{message}"
    );
    session
        .sql("SET 'state.backend.type' = 'fjall'")
        .await
        .unwrap();
}

#[tokio::test]
async fn ttl_holds_for_state_that_was_on_disk() {
    // The timeline of the in-memory TTL test, with rows of three other keys after each row
    // of `a`: with room for two keys, `a` is moved out after every row and read back for the
    // next. Written at 0: alive at 9,999, gone at 10,000; written again at 10,001 and 15,000.
    let timeline = [
        (0, "add"),
        (5_000, "peek"),
        (9_999, "peek"),
        (10_000, "peek"),
        (10_001, "add"),
        (15_000, "add"),
        (24_999, "peek"),
    ];
    let with_filler: Vec<(i64, &str, &str)> = timeline
        .iter()
        .flat_map(|&(time, event)| {
            [
                (time, "a", event),
                (time, "x", "add"),
                (time, "y", "add"),
                (time, "z", "add"),
            ]
        })
        .collect();
    let root = scratch("ttl");
    let session = super::super::state::clocked_session(&with_filler);
    session
        .register(super::super::state::tally_function)
        .unwrap();
    use_disk(&session, &root, "1 kb");
    let sql = "SELECT * FROM Tally(input => TABLE events PARTITION BY k)";
    let counts: Vec<Value> = rows(&session, sql)
        .await
        .into_iter()
        .filter(|row| row[0] == Value::String("a".into()))
        .map(|row| row[1].clone())
        .collect();
    let expected: Vec<Value> = [1_i64, 1, 1, 0, 1, 2, 2].map(Value::from).to_vec();
    assert_eq!(counts, expected);
    let plan = format!(
        "{:?}",
        rows(&session, &format!("EXPLAIN ANALYZE {sql}")).await
    );
    assert!(
        metric(&plan, "state_cache_misses") >= 5.0,
        "`a` came back from disk\n{plan}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Count {
    n: i64,
}

#[derive(SqlRow)]
struct Counts {
    pair: i64,
    all: i64,
}

/// `pair` counts the key's rows two at a time (cleared after every second row); `all`
/// counts every row; `reset` in `v == -1` clears both.
#[ptf(name = "Pairs")]
fn pairs(
    ctx: &mut Context,
    #[state] pair: &mut Count,
    #[state] all: &mut Count,
    #[argument(set_semantic_table)] input: Reading,
    out: &mut Collector<Counts>,
) {
    pair.n += 1;
    all.n += 1;
    out.collect(Counts {
        pair: pair.n,
        all: all.n,
    });
    if input.v == -1 {
        ctx.clear_all_state();
    } else if pair.n == 2 {
        ctx.clear_state("pair");
    }
}

#[tokio::test]
async fn state_cleared_after_it_came_back_from_disk_stays_cleared() {
    // Every key once a round for six rounds; with room for a few keys, each key is moved
    // out after every row and read back for the next, so a cleared entry must not come back
    // from the copy the store kept. In round 4 every key's state is cleared whole.
    const KEYS: i64 = 400;
    const ROUNDS: i64 = 6;
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
    ]));
    let batches: Vec<RecordBatch> = (0..ROUNDS)
        .map(|round| {
            let k: Vec<i64> = (0..KEYS).collect();
            let v = vec![if round == 3 { -1 } else { round }; KEYS as usize];
            RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(Int64Array::from(k)), Arc::new(Int64Array::from(v))],
            )
            .unwrap()
        })
        .collect();
    let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
    let table = MemTable::try_new(schema, vec![batches]).unwrap();
    session.register_table("readings", Arc::new(table)).unwrap();
    session.register(pairs).unwrap();
    let root = scratch("cleared");
    use_disk(&session, &root, "4 kb");
    let sql = "SELECT k, pair, \"all\" FROM Pairs(input => TABLE readings PARTITION BY k)";
    let got = sorted(rows(&session, sql).await);
    // Per key: (pair, all) for rounds 1..6; cleared whole after round 4.
    let per_key = [(1, 1), (2, 2), (1, 3), (2, 4), (1, 1), (2, 2)];
    let expected = sorted(
        (0..KEYS)
            .flat_map(|k| {
                per_key.iter().map(move |&(pair, all)| {
                    vec![Value::BigInt(k), Value::BigInt(pair), Value::BigInt(all)]
                })
            })
            .collect(),
    );
    assert_eq!(got, expected);
    let plan = format!(
        "{:?}",
        rows(&session, &format!("EXPLAIN ANALYZE {sql}")).await
    );
    assert!(
        metric(&plan, "state_cache_misses") >= (KEYS * 3) as f64,
        "keys came back from disk between their rows\n{plan}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A level that reads back only while it is at most 10: what a value written by an older
/// version of a state type looks like to a newer one that narrowed it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
struct Level(i64);

impl TryFrom<i64> for Level {
    type Error = String;

    fn try_from(level: i64) -> Result<Self, String> {
        if level <= 10 {
            Ok(Level(level))
        } else {
            Err(format!("level {level} is above 10"))
        }
    }
}

impl From<Level> for i64 {
    fn from(level: Level) -> i64 {
        level.0
    }
}

/// Raises the key's level by the row's value.
#[ptf(name = "Levels")]
fn levels(
    #[state] level: &mut Level,
    #[argument(set_semantic_table)] input: Reading,
    out: &mut Collector<i64>,
) {
    level.0 += input.v;
    out.collect(level.0);
}

#[tokio::test]
async fn a_state_value_that_no_longer_reads_back_is_an_error_naming_the_function_and_entry() {
    // Keys 0..400, three rounds; key 7's level reaches 12 in round 2, which its type cannot
    // read back when the key returns from disk for round 3.
    const KEYS: i64 = 400;
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
    ]));
    let batches: Vec<RecordBatch> = (0..3)
        .map(|_| {
            let k: Vec<i64> = (0..KEYS).collect();
            let v: Vec<i64> = k.iter().map(|&k| if k == 7 { 6 } else { 1 }).collect();
            RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(Int64Array::from(k)), Arc::new(Int64Array::from(v))],
            )
            .unwrap()
        })
        .collect();
    let sql = "SELECT k, \"EXPR$0\" FROM Levels(input => TABLE readings PARTITION BY k)";
    let session_on = |disk: Option<&std::path::Path>| {
        let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
        let table = MemTable::try_new(schema.clone(), vec![batches.clone()]).unwrap();
        session.register_table("readings", Arc::new(table)).unwrap();
        session.register(levels).unwrap();
        if let Some(root) = disk {
            use_disk(&session, root, "4 kb");
        }
        session
    };
    // In memory the value is never read back, so the run completes (key 7 ends at 18).
    let in_memory = rows(&session_on(None), sql).await;
    assert!(in_memory.contains(&vec![Value::BigInt(7), Value::BigInt(18)]));

    let root = scratch("no-longer-reads");
    let message = error(&session_on(Some(&root)), sql).await;
    for part in ["`levels`", "`level`", "`Level`"] {
        assert!(message.contains(part), "`{part}` in: {message}");
    }
    assert!(
        message.contains("cannot be read back from disk"),
        "says where: {message}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_write_the_disk_refuses_fails_the_query_naming_the_function_and_the_cause() {
    if !is_child() {
        let figures = in_child_ignoring_file_size_signal(
            "keys::a_write_the_disk_refuses_fails_the_query_naming_the_function_and_the_cause",
        );
        assert_eq!(figures.get("failed"), 1);
        return;
    }
    // 200,000 keys with room for a few hundred. Once the query runs (its store open), no
    // file may grow past 1 MiB: the store outgrows that as it would outgrow a full disk.
    const KEYS: i64 = 200_000;
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
    ]));
    let batches: Vec<RecordBatch> = (0..KEYS)
        .step_by(4096)
        .map(|start| {
            let k: Vec<i64> = (start..(start + 4096).min(KEYS)).collect();
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(k.clone())),
                    Arc::new(Int64Array::from(k)),
                ],
            )
            .unwrap()
        })
        .collect();
    let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
    let table = MemTable::try_new(schema, vec![batches]).unwrap();
    session.register_table("readings", Arc::new(table)).unwrap();
    session.register(tallies).unwrap();
    let root = scratch("refused");
    use_disk(&session, &root, "64 kb");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let message = runtime.block_on(async {
        let mut stream = session
            .sql(QUERY)
            .await
            .unwrap()
            .execute_stream()
            .await
            .unwrap();
        let first = stream.next().await.expect("a first batch");
        assert!(first.is_ok(), "the store works before the limit: {first:?}");
        limit_file_size(1 << 20);
        loop {
            match stream.next().await {
                Some(Ok(_)) => {}
                Some(Err(e)) => break e.to_string(),
                None => panic!("the query ended without an error"),
            }
        }
    });
    println!("the query failed: {message}");
    for part in ["`tallies`", root.to_str().unwrap()] {
        assert!(message.contains(part), "`{part}` in: {message}");
    }
    // The cause: the system's own error when the processor's write failed, or the store's
    // account of its background writer failing.
    assert!(
        message.contains("File too large") || message.contains("failed to write to the disk"),
        "the cause in: {message}"
    );
    // The failed run's directory went with it.
    let left: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let _ = std::fs::remove_dir_all(&root);
    println!("figures failed=1");
}
