//! Window aggregates (TUMBLE, HOP, CUMULATE, SESSION) over a fed table take part in checkpoints: stopped at a savepoint and
//! restored (with as many processors, or more, or fewer), each open window goes on with its
//! groups' accumulators — built-in ones and a user-defined one — and the watermark where it
//! stood, so the two runs give together each window's row exactly once, as the
//! uninterrupted run does; a window that fired before the savepoint does not fire again.

use udf_examples::aggregate::string_concat::StringConcatFunction;
use udf_runtime::Checkpoint;

use super::*;

/// Per key and 10 s window: the row count, the first and last word, and the words joined
/// in arrival order (a user-defined aggregate).
const TUMBLE: &str = "SELECT k, window_start, window_end, COUNT(*) AS n, MIN(word) AS lo, MAX(word) AS hi, \
     string_concat(word, '') AS words \
     FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) \
     GROUP BY k, window_start, window_end";

/// Windows of 15 s every 5 s: each row is in three.
const HOP: &str = "SELECT k, window_start, window_end, COUNT(*) AS n, MAX(word) AS hi \
     FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) \
     GROUP BY k, window_start, window_end";

/// Without keys: one processor holds every window.
const GLOBAL: &str = "SELECT window_start, window_end, COUNT(*) AS n, MAX(word) AS hi \
     FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) \
     GROUP BY window_start, window_end";

/// Windows growing by 4 s up to 12 s.
const CUMULATE: &str = "SELECT k, window_start, window_end, COUNT(*) AS n, MIN(word) AS lo \
     FROM TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '12' SECOND)) \
     GROUP BY k, window_start, window_end";

/// Sessions of a key, closed by 3 s without rows (the input's 20 s gaps).
const SESSION: &str = "SELECT k, window_start, window_end, COUNT(*) AS n, string_concat(word, '') AS words \
     FROM TABLE(SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND)) \
     GROUP BY k, window_start, window_end";

const ROWS: usize = 2000;

fn window_session(partitions: usize) -> (Session, udf_runtime::Feed) {
    // The watermark 2 s behind: rows wait in open windows at any savepoint.
    let (session, feed) = delayed_session(partitions, Duration::from_secs(2));
    session.register(StringConcatFunction).unwrap();
    (session, feed)
}

/// The rows of `batches` as text, sorted: window rows of different keys come in any order.
fn sorted_rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut rows: Vec<String> = batches_to_rows(batches)
        .iter()
        .map(|row| {
            let values: Vec<String> = row.iter().map(ToString::to_string).collect();
            values.join(" ")
        })
        .collect();
    rows.sort();
    rows
}

/// `sql` over the whole input, uninterrupted.
async fn whole(sql: &str, input: &RecordBatch) -> Vec<String> {
    let (session, feed) = window_session(2);
    sorted_rows(&output_of(&session, feed, sql, input, 50).await)
}

/// `sql` stopped at a savepoint halfway with `before` processors and restored with
/// `after`: the rows of both runs, and the row the second run resumed at.
/// `setup` is called on each run's session, with whether it is the restored one.
async fn stopped_and_restored(
    name: &str,
    sql: &str,
    input: &RecordBatch,
    (before, after): (usize, usize),
    setup: &dyn Fn(&Session, &std::path::Path, bool),
) -> (Vec<String>, usize) {
    let rows = input.num_rows();
    let dir = scratch(name);
    let (session, feed) = window_session(before);
    setup(&session, &dir, false);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    let uid = uid_of(&session, sql, "WindowAggregateExec").await;
    assert!(uid.starts_with("window-"), "{uid}");
    let drained = running(&session, sql).await;
    send(&feed, input, 0..rows / 2, 50).await;
    let savepoint = session
        .stop_with_savepoint(&uid, dir.join("savepoints"))
        .await
        .unwrap();
    let first = drained.await.unwrap();
    assert!(
        first.iter().map(RecordBatch::num_rows).sum::<usize>() > 0,
        "windows fired before the savepoint"
    );
    let position = Checkpoint::find(&savepoint, &uid)
        .unwrap()
        .position("events")
        .unwrap() as usize;
    assert!(position > 0 && position <= rows / 2, "{position}");

    let (session, feed) = window_session(after);
    setup(&session, &dir, true);
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    assert_eq!(uid_of(&session, sql, "WindowAggregateExec").await, uid);
    let drained = running(&session, sql).await;
    send(&feed, input, position..rows, 50).await;
    feed.close();
    let second = drained.await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut both = first;
    both.extend(second);
    (sorted_rows(&both), position)
}

async fn restored_runs_equal_the_whole(name: &str, sql: &str) {
    let input = input(ROWS, 5);
    let expected = whole(sql, &input).await;
    // Windows on both sides of the savepoint (2000 rows span 280 s, gaps included).
    assert!(expected.len() >= 20, "{}", expected.len());
    for counts in [(2, 2), (2, 3), (3, 1)] {
        let (rows, position) = stopped_and_restored(
            &format!("{name}-{}-{}", counts.0, counts.1),
            sql,
            &input,
            counts,
            &|_, _, _| {},
        )
        .await;
        assert_eq!(
            rows, expected,
            "{name}: {} → {} processors, stopped at row {position}",
            counts.0, counts.1
        );
    }
}

/// A window aggregate of two key columns goes on after each periodic checkpoint as if none
/// had been taken (saving a window's groups hands their keys out of its key table and back).
#[tokio::test]
async fn a_window_aggregate_of_two_keys_goes_on_after_periodic_checkpoints() {
    const TWO_KEYS: &str = "SELECT k, word, window_start, window_end, COUNT(*) AS n \
         FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) \
         GROUP BY k, word, window_start, window_end";
    let input = input(ROWS, 5);
    let expected = whole(TWO_KEYS, &input).await;
    assert!(expected.len() >= 100, "{}", expected.len());

    let dir = scratch("window-two-keys");
    let (session, feed) = window_session(2);
    checkpoint_every(&session, "20 ms", &dir);
    let uid = uid_of(&session, TWO_KEYS, "WindowAggregateExec").await;
    let drained = running(&session, TWO_KEYS).await;
    // Paced by the checkpoints themselves, not by the clock: after each fifth of the input
    // the feed waits until one more checkpoint has completed, so at least four are taken
    // between rows however loaded the machine is (bounded: 10 s).
    let completed = || {
        session
            .checkpoint_stats(&uid)
            .map_or(0, |stats| stats.completed)
    };
    let started = std::time::Instant::now();
    for start in (0..ROWS).step_by(100) {
        send(&feed, &input, start..start + 100, 50).await;
        if (start + 100) % (ROWS / 5) == 0 && start + 100 < ROWS {
            let goal = completed() + 1;
            while completed() < goal {
                tokio::time::sleep(Duration::from_millis(5)).await;
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "no checkpoint completed in 10 s"
                );
            }
        }
    }
    feed.close();
    let output = drained.await.unwrap();
    let stats = session.checkpoint_stats(&uid).unwrap();
    assert!(stats.completed >= 4, "{stats:?}");
    assert_eq!(sorted_rows(&output), expected);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sql` over `input` stopped at a savepoint with 2 processors on the disk backend within
/// `budget`, restored on disk with 3 and in memory with 1: each pair of runs gives together
/// the rows of the uninterrupted run, `expected`.
async fn restored_from_disk_equal_the_whole(
    name: &str,
    sql: &str,
    input: &RecordBatch,
    budget: &str,
    expected: &[String],
) {
    for (after, restored_on_disk) in [(3, true), (1, false)] {
        let setup = |session: &Session, dir: &std::path::Path, restored: bool| {
            if !restored || restored_on_disk {
                crate::support::use_disk(session, &dir.join("state"), budget);
            }
        };
        let (rows, position) =
            stopped_and_restored(&format!("{name}-{after}"), sql, input, (2, after), &setup).await;
        assert!(
            rows == expected,
            "2 → {after} processors (restored on disk: {restored_on_disk}), stopped at row {position}"
        );
    }
}

/// With the disk backend at a budget that holds a few groups per processor, most groups of
/// the open windows are on disk when the savepoint is taken: the savepoint holds them too,
/// and a run restored from it, on disk or in memory, goes on as the uninterrupted run.
#[tokio::test]
async fn a_savepoint_holds_the_window_groups_on_disk() {
    // About a hundred groups per window, each row of its own key.
    let input = input(ROWS, 400);
    let expected = whole(TUMBLE, &input).await;
    assert!(expected.len() >= 1_500, "{}", expected.len());
    restored_from_disk_equal_the_whole("window-disk", TUMBLE, &input, "256 kb", &expected).await;
}

/// The same for sessions at the smallest budget (two open sessions per processor in memory):
/// the savepoint holds the sessions on disk, and a run restored from it, on disk or in
/// memory, goes on merging into them as the uninterrupted run does.
#[tokio::test]
async fn a_savepoint_holds_the_open_sessions_on_disk() {
    // 30 keys, a row of each every 3 s: every row merges into its key's open session, which
    // closes at the input's 20 s gaps — 30 sessions a block of 400 rows.
    let input = input(ROWS, 30);
    let expected = whole(SESSION, &input).await;
    assert_eq!(expected.len(), 150);
    restored_from_disk_equal_the_whole("session-disk", SESSION, &input, "1 kb", &expected).await;
}

#[tokio::test]
async fn a_tumbling_window_aggregate_restored_from_a_savepoint_emits_each_window_once() {
    restored_runs_equal_the_whole("tumble", TUMBLE).await;
}

#[tokio::test]
async fn a_hopping_window_aggregate_restored_from_a_savepoint_emits_each_window_once() {
    restored_runs_equal_the_whole("hop", HOP).await;
}

#[tokio::test]
async fn a_window_aggregate_without_keys_restored_from_a_savepoint_emits_each_window_once() {
    restored_runs_equal_the_whole("global", GLOBAL).await;
}

#[tokio::test]
async fn a_cumulating_window_aggregate_restored_from_a_savepoint_emits_each_window_once() {
    restored_runs_equal_the_whole("cumulate", CUMULATE).await;
}

#[tokio::test]
async fn a_session_window_aggregate_restored_from_a_savepoint_emits_each_session_once() {
    restored_runs_equal_the_whole("session", SESSION).await;
}

/// A savepoint of one window aggregate is not taken for another: the uid differs.
#[tokio::test]
async fn a_savepoint_of_one_window_aggregate_is_not_taken_for_another() {
    let input = input(400, 5);
    let dir = scratch("window-other");
    let (session, feed) = window_session(2);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    let uid = uid_of(&session, TUMBLE, "WindowAggregateExec").await;
    let drained = running(&session, TUMBLE).await;
    send(&feed, &input, 0..200, 50).await;
    let savepoint = session
        .stop_with_savepoint(&uid, dir.join("savepoints"))
        .await
        .unwrap();
    drained.await.unwrap();

    let (session, _feed) = window_session(2);
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    let other = uid_of(&session, HOP, "WindowAggregateExec").await;
    assert_ne!(other, uid);
    let error = match tokio::time::timeout(
        Duration::from_secs(30),
        session.sql(HOP).await.unwrap().collect(),
    )
    .await
    .expect("the restore fails at once")
    {
        Ok(_) => panic!("restored another window aggregate's savepoint"),
        Err(error) => error.to_string(),
    };
    assert!(error.contains(&uid) && error.contains(&other), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the INSERT below writes: each window's start as text.
const TUMBLE_ROWS: &str = "SELECT k, CAST(window_start AS VARCHAR) AS ws, n, words FROM (SELECT k, window_start, window_end, COUNT(*) AS n, string_concat(word, '') AS words \
     FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) \
     GROUP BY k, window_start, window_end)";

/// `insert` into the table `create` makes, running in a task.
async fn start_insert(
    session: &Session,
    create: &str,
    insert: &str,
) -> tokio::task::JoinHandle<udf_runtime::datafusion::common::Result<Vec<RecordBatch>>> {
    session.sql(create).await.unwrap();
    let df = session.sql(insert).await.unwrap();
    tokio::spawn(df.collect())
}

/// `INSERT INTO` a file table of a window aggregate stopped at a savepoint and restored:
/// each window's row is committed once, by the checkpoints of one run or the other.
#[tokio::test]
async fn a_window_aggregate_written_through_a_restore_is_committed_once() {
    let input = input(ROWS, 5);
    let expected = whole(TUMBLE_ROWS, &input).await;
    let dir = scratch("window-sink");
    let out = dir.join("out");
    let create = format!(
        "CREATE EXTERNAL TABLE IF NOT EXISTS out (k VARCHAR, ws VARCHAR, n BIGINT, words VARCHAR) STORED AS PARQUET LOCATION '{}/'",
        out.display()
    );
    let insert_sql = format!("INSERT INTO out {TUMBLE_ROWS}");

    let (session, feed) = window_session(2);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    let uid = uid_of(&session, TUMBLE_ROWS, "WindowAggregateExec").await;
    let result = start_insert(&session, &create, &insert_sql).await;
    send(&feed, &input, 0..ROWS / 2, 50).await;
    let savepoint = session
        .stop_with_savepoint(&uid, dir.join("savepoints"))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), result)
        .await
        .expect("the insert ends")
        .unwrap()
        .unwrap();
    let first = super::sink::committed_rows(&out, "parquet").await;
    assert!(
        first.iter().map(RecordBatch::num_rows).sum::<usize>() > 0,
        "windows committed before the savepoint"
    );
    let position = Checkpoint::find(&savepoint, &uid)
        .unwrap()
        .position("events")
        .unwrap() as usize;

    let (session, feed) = window_session(3);
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    let result = start_insert(&session, &create, &insert_sql).await;
    send(&feed, &input, position..ROWS, 50).await;
    feed.close();
    tokio::time::timeout(Duration::from_secs(30), result)
        .await
        .expect("the insert ends")
        .unwrap()
        .unwrap();

    assert_eq!(in_progress_files(&out), Vec::<String>::new());
    let committed = sorted_rows(&super::sink::committed_rows(&out, "parquet").await);
    assert_eq!(committed, expected, "stopped at row {position}");
    let _ = std::fs::remove_dir_all(&dir);
}
