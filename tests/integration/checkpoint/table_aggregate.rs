//! A table aggregate's changelog over a fed table takes part in checkpoints: stopped at a
//! savepoint and restored (with as many partitions, or more), it goes on with each group's
//! accumulator, so the two runs give together exactly the uninterrupted changelog — and,
//! written by `INSERT INTO` a file table, commit it once.

use std::sync::Arc;

use udf_core::arrow::array::Int32Array;
use udf_examples::table_aggregate::top2::Top2;
use udf_runtime::Checkpoint;

use std::path::PathBuf;

use super::*;

const ROWS: usize = 600;

fn top2_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("k", udf_core::arrow::datatypes::DataType::Utf8, false),
        Field::new("v", udf_core::arrow::datatypes::DataType::Int32, false),
    ]))
}

/// Key `i % 7`, a value jumping about in 0..101.
fn top2_input() -> RecordBatch {
    let k: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..ROWS).map(|i| format!("k{}", i % 7)),
    ));
    let v: ArrayRef = Arc::new(Int32Array::from_iter_values(
        (0..ROWS).map(|i| ((i * 37) % 101) as i32),
    ));
    RecordBatch::try_new(top2_schema(), vec![k, v]).unwrap()
}

fn top2_session(partitions: usize) -> (Session, udf_runtime::Feed) {
    let session = crate::support::session_of(partitions);
    session.register(Top2).unwrap();
    let feed = session.register_feed("events", top2_schema()).unwrap();
    (session, feed)
}

fn top2_query(uid: &str) -> String {
    format!(
        "SELECT * FROM Top2(input => TABLE events PARTITION BY k, changelog => TRUE, uid => '{uid}')"
    )
}

/// Each group's changes in order: `op value rank`.
fn changes(batches: &[RecordBatch]) -> BTreeMap<String, Vec<String>> {
    by_key(batches)
        .into_iter()
        .map(|(k, rows)| {
            let rows = rows
                .into_iter()
                .map(|r| format!("{} {} {}", r[3], r[1], r[2]))
                .collect();
            (k, rows)
        })
        .collect()
}

/// The changelog of the whole input, uninterrupted.
async fn whole_changelog(input: &RecordBatch) -> BTreeMap<String, Vec<String>> {
    let (session, feed) = top2_session(2);
    changes(&output_of(&session, feed, &top2_query("whole"), input, 50).await)
}

/// The table `out`: Parquet files in `out`.
async fn create_out(session: &Session, out: &std::path::Path) {
    session
        .sql(&format!(
            "CREATE EXTERNAL TABLE IF NOT EXISTS out (k VARCHAR, value INT, rank INT, op VARCHAR) STORED AS PARQUET LOCATION '{}/'",
            out.display()
        ))
        .await
        .unwrap();
}

/// `INSERT INTO out` (Parquet files in `out`) the changelog of `uid` over `rows` of the
/// input, then stops it at a savepoint in `stop_at` (given back), or else ends the input.
async fn insert(
    session: &Session,
    feed: udf_runtime::Feed,
    out: &std::path::Path,
    uid: &str,
    rows: std::ops::Range<usize>,
    stop_at: Option<&std::path::Path>,
) -> Option<PathBuf> {
    create_out(session, out).await;
    let df = session
        .sql(&format!("INSERT INTO out {}", top2_query(uid)))
        .await
        .unwrap();
    let result = tokio::spawn(async move { df.collect().await });
    send(&feed, &top2_input(), rows, 50).await;
    let savepoint = match stop_at {
        Some(dir) => Some(session.stop_with_savepoint(uid, dir).await.unwrap()),
        None => {
            feed.close();
            None
        }
    };
    let written = tokio::time::timeout(Duration::from_secs(30), result)
        .await
        .expect("the insert ends")
        .unwrap()
        .unwrap();
    assert_eq!(written[0].num_rows(), 1);
    savepoint
}

/// How a run of [`in_two_runs`] keeps its state.
#[derive(Clone, Copy, Debug)]
enum Backend {
    Memory,
    /// On disk with the smallest budget (two groups per partition in memory).
    Disk,
}

/// `input` through Top2 in two runs: one of `before` partitions, stopped at a savepoint after
/// half the rows, then one of `after` partitions restored from it, to the end; each run's
/// state on its `backends` entry. Each group's changes of both runs, and the row the first
/// stopped at.
async fn in_two_runs(
    name: &str,
    input: &RecordBatch,
    (before, after): (usize, usize),
    backends: [Backend; 2],
    batch: usize,
) -> (BTreeMap<String, Vec<String>>, usize) {
    let rows = input.num_rows();
    let (dir, uid) = (scratch(name), own(name));
    let session_on = |partitions, backend| {
        let (session, feed) = top2_session(partitions);
        match backend {
            Backend::Memory => session.set_option("state.backend.type", "hashmap").unwrap(),
            Backend::Disk => crate::support::use_disk(&session, &dir.join("state"), "1 kb"),
        }
        (session, feed)
    };
    let (session, feed) = session_on(before, backends[0]);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    let drained = running(&session, &top2_query(&uid)).await;
    send(&feed, input, 0..rows / 2, batch).await;
    let savepoint = session
        .stop_with_savepoint(&uid, dir.join("savepoints"))
        .await
        .unwrap();
    let first = drained.await.unwrap();
    let position = Checkpoint::find(&savepoint, &uid)
        .unwrap()
        .position("events")
        .unwrap() as usize;
    assert!(position > 0 && position <= rows / 2, "{position}");

    let (session, feed) = session_on(after, backends[1]);
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    let drained = running(&session, &top2_query(&uid)).await;
    send(&feed, input, position..rows, batch).await;
    feed.close();
    let second = drained.await.unwrap();

    let mut combined = changes(&first);
    for (key, rows) in changes(&second) {
        combined.entry(key).or_default().extend(rows);
    }
    let _ = std::fs::remove_dir_all(&dir);
    (combined, position)
}

#[tokio::test]
async fn a_table_aggregate_changelog_restored_from_a_savepoint_goes_on_where_it_stood() {
    let input = top2_input();
    let expected = whole_changelog(&input).await;
    assert_eq!(expected.len(), 7);

    for (before, after) in [(2, 2), (2, 3)] {
        let name = format!("top2-{before}-{after}");
        let memory = [Backend::Memory; 2];
        let (combined, position) = in_two_runs(&name, &input, (before, after), memory, 50).await;
        assert_eq!(
            combined, expected,
            "{before} → {after} partitions, stopped at row {position}"
        );
    }
}

#[tokio::test]
async fn a_table_aggregate_changelog_written_through_a_restore_is_committed_once() {
    let expected = whole_changelog(&top2_input()).await;
    let name = "top2-sink";
    let (dir, uid) = (scratch(name), own(name));
    let out = dir.join("out");
    let (session, feed) = top2_session(2);
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    let savepoint = insert(
        &session,
        feed,
        &out,
        &uid,
        0..ROWS / 2,
        Some(&dir.join("savepoints")),
    )
    .await
    .unwrap();
    let position = Checkpoint::find(&savepoint, &uid)
        .unwrap()
        .position("events")
        .unwrap() as usize;

    let (session, feed) = top2_session(2);
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    // Restoring alone writes no checkpoint, so nothing could commit: refused up front.
    create_out(&session, &out).await;
    let error = planning_error(&session, &format!("INSERT INTO out {}", top2_query(&uid))).await;
    assert!(
        error.contains("execution.checkpointing.dir is not set"),
        "{error}"
    );
    checkpoint_every(&session, "1 h", &dir.join("periodic"));
    insert(&session, feed, &out, &uid, position..ROWS, None).await;

    assert_eq!(in_progress_files(&out), Vec::<String>::new());
    let committed = changes(&super::sink::committed_rows(&out, "parquet").await);
    assert_eq!(committed, expected, "stopped at row {position}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_table_aggregate_changelog_without_uid_is_refused_when_checkpointing() {
    let (session, _feed) = top2_session(2);
    checkpoint_every(&session, "1 s", std::path::Path::new("/tmp/unused"));
    let error = planning_error(
        &session,
        "SELECT * FROM Top2(input => TABLE events PARTITION BY k, changelog => TRUE)",
    )
    .await;
    assert!(
        error.contains("the table aggregate `top2` has no uid: give it `.uid(\"...\")`"),
        "{error}"
    );
}

/// With the disk backend and far more groups than the budget holds, a savepoint saves the
/// groups on disk beside those in memory: restored — on disk again, at another partition
/// count, or in memory — the run goes on with every group's accumulator.
#[tokio::test]
async fn a_table_aggregate_changelog_with_groups_on_disk_restores_every_group() {
    const ROWS: usize = 3_000;
    let k: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..ROWS).map(|i| format!("k{}", (i * 13) % 500)),
    ));
    let v: ArrayRef = Arc::new(Int32Array::from_iter_values(
        (0..ROWS).map(|i| ((i * 37) % 101) as i32),
    ));
    let input = RecordBatch::try_new(top2_schema(), vec![k, v]).unwrap();
    let expected = whole_changelog(&input).await;
    assert_eq!(expected.len(), 500);

    for (after, backend) in [(3, Backend::Disk), (2, Backend::Memory)] {
        let name = format!("top2-disk-{after}-{backend:?}");
        let backends = [Backend::Disk, backend];
        let (combined, position) = in_two_runs(&name, &input, (2, after), backends, 100).await;
        assert!(
            combined == expected,
            "2 → {after} partitions (after: {backend:?}), stopped at row {position}"
        );
    }
}
