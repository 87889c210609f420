//! The updating GROUP BY over a changelog feed takes part in checkpoints: stopped at a
//! savepoint and restored (with as many partitions, or more), each group goes on with its
//! row count and accumulators — built-in ones, DISTINCT and a user-defined one with
//! `retract` — so the two runs give together exactly the uninterrupted changelog; written by
//! `INSERT INTO` a file table, it is committed once.

use udf_core::arrow::datatypes::DataType as ArrowType;
use udf_examples::aggregate::weighted_avg::WeightedAvg;
use udf_runtime::{Checkpoint, changelog};

use super::*;

/// `t(k STRING, v BIGINT, w INT)`, changes of it.
fn t_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("k", ArrowType::Utf8, false),
        Field::new("v", ArrowType::Int64, false),
        Field::new("w", ArrowType::Int32, false),
    ]))
}

/// About 620 changes: row `i` is a `-D` of row `i - 7` (same key) when `i % 4 == 3`, else
/// a `+I` to key `i % 7`; and key `z` gets a row every 50 and loses it 25 later, so it
/// empties (`-D`) and comes back (`+I`) across the savepoint.
fn changes_input() -> RecordBatch {
    let value = |i: usize| ((i * 37) % 101) as i64;
    let weight = |i: usize| (i % 3 + 1) as i32;
    let mut rows: Vec<(&str, String, i64, i32)> = Vec::new();
    for i in 0..600 {
        if i % 4 == 3 && i >= 7 {
            rows.push(("-D", format!("k{}", i % 7), value(i - 7), weight(i - 7)));
        } else {
            rows.push(("+I", format!("k{}", i % 7), value(i), weight(i)));
        }
        match i % 50 {
            0 => rows.push(("+I", "z".into(), value(i), weight(i))),
            25 => rows.push(("-D", "z".into(), value(i - 25), weight(i - 25))),
            _ => {}
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r.1))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.2))),
        Arc::new(udf_core::arrow::array::Int32Array::from_iter_values(
            rows.iter().map(|r| r.3),
        )),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
    ];
    RecordBatch::try_new(Arc::new(changelog::with_row_kind(&t_schema())), columns).unwrap()
}

const GROUP_BY: &str = "SELECT k, COUNT(*) AS n, SUM(v) AS s, AVG(v) AS m, MIN(v) AS lo, MAX(v) AS hi, \
     COUNT(DISTINCT v % 5) AS d, WeightedAvg(v, w) AS wavg FROM t GROUP BY k";

fn t_session(partitions: usize) -> (Session, udf_runtime::Feed) {
    let session = crate::support::session_of(partitions);
    session.register(WeightedAvg).unwrap();
    let feed = session.register_changelog_feed("t", t_schema()).unwrap();
    (session, feed)
}

/// Each group's changes in order, each row its values (kind last) joined by spaces.
fn changes(batches: &[RecordBatch]) -> BTreeMap<String, Vec<String>> {
    by_key(batches)
        .into_iter()
        .map(|(k, rows)| {
            let rows = rows
                .iter()
                .map(|row| {
                    let values: Vec<String> = row.iter().map(ToString::to_string).collect();
                    values.join(" ")
                })
                .collect();
            (k, rows)
        })
        .collect()
}

async fn whole_changelog(input: &RecordBatch) -> BTreeMap<String, Vec<String>> {
    let (session, feed) = t_session(2);
    changes(&output_of(&session, feed, GROUP_BY, input, 50).await)
}

/// How the sessions of [`across_a_savepoint`] are made: the partitions before and after,
/// and what each session is set up with (`true` for the one restored).
struct Runs<'a> {
    before: usize,
    after: usize,
    setup: &'a dyn Fn(&Session, bool),
}

/// Runs `GROUP_BY` over the first half of `input` in a session of `runs.before` partitions,
/// stops it at a savepoint under `dir`, and restores it in a session of `runs.after` that
/// gets the rest from the position saved: each group's changes of both runs, and that
/// position.
async fn across_a_savepoint(
    input: &RecordBatch,
    dir: &std::path::Path,
    runs: Runs<'_>,
    rows_per_batch: usize,
) -> (BTreeMap<String, Vec<String>>, usize) {
    let rows = input.num_rows();
    let (session, feed) = t_session(runs.before);
    (runs.setup)(&session, false);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    let uid = uid_of(&session, GROUP_BY, "UpdatingAggregateExec").await;
    assert!(uid.starts_with("group-by-"), "{uid}");
    let drained = running(&session, GROUP_BY).await;
    send(&feed, input, 0..rows / 2, rows_per_batch).await;
    let savepoint = session
        .stop_with_savepoint(&uid, dir.join("savepoints"))
        .await
        .unwrap();
    let first = drained.await.unwrap();
    let position = Checkpoint::find(&savepoint, &uid)
        .unwrap()
        .position("t")
        .unwrap() as usize;
    assert!(position > 0 && position <= rows / 2, "{position}");

    let (session, feed) = t_session(runs.after);
    (runs.setup)(&session, true);
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    assert_eq!(
        uid_of(&session, GROUP_BY, "UpdatingAggregateExec").await,
        uid,
        "the uid is the query's"
    );
    let drained = running(&session, GROUP_BY).await;
    send(&feed, input, position..rows, rows_per_batch).await;
    feed.close();
    let second = drained.await.unwrap();

    let mut combined = changes(&first);
    for (key, rows) in changes(&second) {
        combined.entry(key).or_default().extend(rows);
    }
    (combined, position)
}

#[tokio::test]
async fn a_group_by_restored_from_a_savepoint_goes_on_where_it_stood() {
    let input = changes_input();
    let expected = whole_changelog(&input).await;
    assert_eq!(expected.len(), 8);
    // `z` empties twelve times, on both sides of the savepoint.
    assert_eq!(
        expected["z"].iter().filter(|r| r.ends_with("-D")).count(),
        12
    );

    for (before, after) in [(2, 2), (2, 3), (3, 1)] {
        let dir = scratch(&format!("group-by-{before}-{after}"));
        let runs = Runs {
            before,
            after,
            setup: &|_, _| {},
        };
        let (combined, position) = across_a_savepoint(&input, &dir, runs, 50).await;
        assert_eq!(
            combined, expected,
            "{before} → {after} partitions, stopped at row {position}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A GROUP BY of two key columns goes on after each periodic checkpoint as if none had been
/// taken (saving the groups hands their keys out of the key table and back).
#[tokio::test]
async fn a_group_by_of_two_keys_goes_on_after_periodic_checkpoints() {
    const TWO_KEYS: &str =
        "SELECT k, v % 2 AS odd, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY k, v % 2";
    let input = changes_input();
    let rows = input.num_rows();
    let (session, feed) = t_session(2);
    // Each group's changes in order: groups of one `k` may be in different partitions.
    let by_group = |batches: &[RecordBatch]| {
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for rows in changes(batches).into_values() {
            for row in rows {
                let group: Vec<&str> = row.split(' ').take(2).collect();
                groups.entry(group.join(" ")).or_default().push(row);
            }
        }
        groups
    };
    let expected = by_group(&output_of(&session, feed, TWO_KEYS, &input, 20).await);
    assert_eq!(expected.len(), 16);

    let dir = scratch("group-by-two-keys");
    let (session, feed) = t_session(2);
    checkpoint_every(&session, "20 ms", &dir);
    let uid = uid_of(&session, TWO_KEYS, "UpdatingAggregateExec").await;
    let drained = running(&session, TWO_KEYS).await;
    // Paced by the checkpoints themselves, not by the clock: after each fifth of the slices
    // the feed waits until one more checkpoint has completed, so at least four are taken
    // between rows however loaded the machine is (bounded: 10 s).
    let completed = || {
        session
            .checkpoint_stats(&uid)
            .map_or(0, |stats| stats.completed)
    };
    let starts: Vec<usize> = (0..rows).step_by(40).collect();
    let fifth = (starts.len() / 5).max(1);
    let started = std::time::Instant::now();
    for (slice, &start) in starts.iter().enumerate() {
        send(&feed, &input, start..(start + 40).min(rows), 20).await;
        if (slice + 1) % fifth == 0 && slice + 1 < starts.len() {
            let goal = completed() + 1;
            while completed() < goal {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                assert!(
                    started.elapsed() < std::time::Duration::from_secs(10),
                    "no checkpoint completed in 10 s"
                );
            }
        }
    }
    feed.close();
    let output = drained.await.unwrap();
    let stats = session.checkpoint_stats(&uid).unwrap();
    assert!(stats.completed >= 4, "{stats:?}");
    assert_eq!(stats.failed, 0, "{stats:?}");
    assert_eq!(by_group(&output), expected);
    let _ = std::fs::remove_dir_all(&dir);
}

/// 1,500 keys, four rows each and every fourth taken back (`-D` of the key's row before).
fn many_keys_input() -> RecordBatch {
    let value = |i: usize| ((i * 37) % 101) as i64;
    let weight = |i: usize| (i % 3 + 1) as i32;
    let rows: Vec<(&str, usize, i64, i32)> = (0..6_000)
        .map(|i| match i % 4 == 3 && i >= 1_500 {
            true => ("-D", i % 1_500, value(i - 1_500), weight(i - 1_500)),
            false => ("+I", i % 1_500, value(i), weight(i)),
        })
        .collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| format!("k{}", r.1)),
        )),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.2))),
        Arc::new(udf_core::arrow::array::Int32Array::from_iter_values(
            rows.iter().map(|r| r.3),
        )),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
    ];
    RecordBatch::try_new(Arc::new(changelog::with_row_kind(&t_schema())), columns).unwrap()
}

/// With the disk backend at a budget that holds a couple of groups per partition, almost
/// every group is on disk when the savepoint is taken: the savepoint holds them too, and a
/// run restored from it, on disk or in memory, goes on as the uninterrupted run.
#[tokio::test]
async fn a_savepoint_holds_the_groups_on_disk() {
    let input = many_keys_input();
    let expected = whole_changelog(&input).await;
    assert_eq!(expected.len(), 1_500);
    for (after, restored_on_disk) in [(3, true), (1, false)] {
        let dir = scratch(&format!("group-by-disk-{after}"));
        let state = dir.join("state");
        let setup = |session: &Session, restored: bool| {
            if !restored || restored_on_disk {
                crate::support::use_disk(session, &state, "256 kb");
            }
        };
        let runs = Runs {
            before: 2,
            after,
            setup: &setup,
        };
        let (combined, position) = across_a_savepoint(&input, &dir, runs, 100).await;
        assert!(position > 1_500, "{position}");
        assert_eq!(
            combined, expected,
            "2 → {after} partitions (restored on disk: {restored_on_disk}), stopped at row {position}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A savepoint of one GROUP BY does not restore another: its uid differs, and the restore
/// says that no state is saved under it.
#[tokio::test]
async fn a_savepoint_of_one_group_by_is_not_taken_for_another() {
    let dir = scratch("group-by-other");
    let (session, feed) = t_session(2);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    let uid = uid_of(&session, GROUP_BY, "UpdatingAggregateExec").await;
    let drained = running(&session, GROUP_BY).await;
    send(&feed, &changes_input(), 0..100, 50).await;
    let savepoint = session
        .stop_with_savepoint(&uid, dir.join("savepoints"))
        .await
        .unwrap();
    drained.await.unwrap();

    let other = "SELECT k, COUNT(*) AS n FROM t GROUP BY k";
    let (session, _feed) = t_session(2);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    assert_ne!(uid_of(&session, other, "UpdatingAggregateExec").await, uid);
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    let error = match session.sql(other).await.unwrap().collect().await {
        Ok(_) => panic!("restored another query's savepoint"),
        Err(error) => error.to_string(),
    };
    assert!(error.contains(&uid), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_group_by_written_through_a_restore_is_committed_once() {
    let input = changes_input();
    let rows = input.num_rows();
    let expected = whole_changelog(&input).await;
    let dir = scratch("group-by-sink");
    let out = dir.join("out");
    // The column list leaves `op` out: it takes the row kinds (the planner counts a
    // query's columns before the GROUP BY becomes a changelog).
    let insert_sql = format!("INSERT INTO out (k, n, s, m, lo, hi, d, wavg) {GROUP_BY}");
    let create = format!(
        "CREATE EXTERNAL TABLE IF NOT EXISTS out (k VARCHAR, n BIGINT, s BIGINT, m DOUBLE, lo BIGINT, hi BIGINT, d BIGINT, wavg BIGINT, op VARCHAR) STORED AS PARQUET LOCATION '{}/'",
        out.display()
    );

    let (session, feed) = t_session(2);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    session.sql(&create).await.unwrap();
    let uid = uid_of(&session, GROUP_BY, "UpdatingAggregateExec").await;
    let df = session.sql(&insert_sql).await.unwrap();
    let result = tokio::spawn(async move { df.collect().await });
    send(&feed, &input, 0..rows / 2, 50).await;
    let savepoint = session
        .stop_with_savepoint(&uid, dir.join("savepoints"))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), result)
        .await
        .expect("the insert ends")
        .unwrap()
        .unwrap();
    let position = Checkpoint::find(&savepoint, &uid)
        .unwrap()
        .position("t")
        .unwrap() as usize;

    let (session, feed) = t_session(2);
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    session.sql(&create).await.unwrap();
    let df = session.sql(&insert_sql).await.unwrap();
    let result = tokio::spawn(async move { df.collect().await });
    send(&feed, &input, position..rows, 50).await;
    feed.close();
    tokio::time::timeout(Duration::from_secs(30), result)
        .await
        .expect("the insert ends")
        .unwrap()
        .unwrap();

    assert_eq!(in_progress_files(&out), Vec::<String>::new());
    let committed = changes(&super::sink::committed_rows(&out, "parquet").await);
    assert_eq!(committed, expected, "stopped at row {position}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A savepoint asked of a uid no query runs names the uids that run.
#[tokio::test]
async fn a_savepoint_of_an_unknown_uid_names_the_running_ones() {
    let dir = scratch("group-by-unknown");
    let (session, feed) = t_session(1);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    let uid = uid_of(&session, GROUP_BY, "UpdatingAggregateExec").await;
    let drained = running(&session, GROUP_BY).await;
    send(&feed, &changes_input(), 0..10, 10).await;
    let error = session
        .stop_with_savepoint("group-by-0", dir.join("savepoints"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no query with checkpoints runs the operator of uid `group-by-0`")
            && error.contains(&format!("running: `{uid}`")),
        "{error}"
    );
    feed.close();
    drained.await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
