//! Row-time OVER windows over a fed table take part in checkpoints: stopped at a savepoint
//! and restored (with as many processors, or more, or fewer), each key goes on with its
//! accumulators, the rows in its frame (to be taken out of it later) and the rows waiting
//! for the watermark, so the two runs give together each row exactly once with the
//! aggregates of the uninterrupted run.

use udf_examples::aggregate::weighted_avg::WeightedAvg;
use udf_runtime::Checkpoint;

use super::*;

/// Over the last 5 s of the key: the row count, the greatest word, and a user-defined
/// aggregate with `retract`.
const RANGE: &str = "SELECT k, ts, word, \
     COUNT(*) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW) AS n, \
     MAX(word) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW) AS hi, \
     WeightedAvg(CAST(ascii(word) AS BIGINT), CAST(ascii(word) - 96 AS INT)) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW) AS wavg \
     FROM events";

/// Over the key's last four rows.
const ROWS_FRAME: &str = "SELECT k, ts, word, \
     MIN(word) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS lo, \
     COUNT(*) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS n \
     FROM events";

/// Without PARTITION BY: one processor, one key.
const UNPARTITIONED: &str = "SELECT k, ts, \
     COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW) AS n \
     FROM events";

const ROWS: usize = 2000;

fn over_session(partitions: usize) -> (Session, udf_runtime::Feed) {
    // The watermark 2 s behind: rows wait at any savepoint.
    let (session, feed) = delayed_session(partitions, Duration::from_secs(2));
    session.register(WeightedAvg).unwrap();
    (session, feed)
}

/// Each key's rows in order, as text.
fn rows_by_key(batches: &[RecordBatch]) -> BTreeMap<String, Vec<String>> {
    by_key(batches)
        .into_iter()
        .map(|(key, rows)| {
            let rows = rows
                .iter()
                .map(|row| {
                    let values: Vec<String> = row.iter().map(ToString::to_string).collect();
                    values.join(" ")
                })
                .collect();
            (key, rows)
        })
        .collect()
}

/// `sql` over `ROWS` rows of `keys` keys, stopped at a savepoint and restored with as many
/// processors, more and fewer: each pair of runs gives together the uninterrupted run's
/// rows. With `on_disk`, the first run and the restored ones with more than one processor
/// keep their keys on disk at the smallest budget (two keys per processor in memory).
async fn restored_runs_equal_the_whole(name: &str, sql: &str, keys: usize, on_disk: bool) {
    let input = input(ROWS, keys);
    let (session, feed) = over_session(2);
    let expected = rows_by_key(&output_of(&session, feed, sql, &input, 50).await);
    assert_eq!(expected.values().map(Vec::len).sum::<usize>(), ROWS);

    for (before, after) in [(2, 2), (2, 3), (3, 1)] {
        let dir = scratch(&format!("{name}-{before}-{after}"));
        let (session, feed) = over_session(before);
        if on_disk {
            crate::support::use_disk(&session, &dir.join("state"), "1 kb");
        }
        checkpoint_every(&session, "1 h", &dir.join("periodic"));
        let uid = uid_of(&session, sql, "EventTimeOverExec").await;
        assert!(uid.starts_with("over-"), "{uid}");
        let drained = running(&session, sql).await;
        send(&feed, &input, 0..ROWS / 2, 50).await;
        let savepoint = session
            .stop_with_savepoint(&uid, dir.join("savepoints"))
            .await
            .unwrap();
        let first = drained.await.unwrap();
        let position = Checkpoint::find(&savepoint, &uid)
            .unwrap()
            .position("events")
            .unwrap() as usize;
        let emitted: usize = first.iter().map(RecordBatch::num_rows).sum();
        assert!(
            emitted > 0 && emitted < position,
            "rows emitted before the savepoint ({emitted}) and rows waiting at it (read {position})"
        );

        let (session, feed) = over_session(after);
        if on_disk && after > 1 {
            crate::support::use_disk(&session, &dir.join("state"), "1 kb");
        }
        session
            .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
            .unwrap();
        assert_eq!(uid_of(&session, sql, "EventTimeOverExec").await, uid);
        let drained = running(&session, sql).await;
        send(&feed, &input, position..ROWS, 50).await;
        feed.close();
        let second = drained.await.unwrap();
        let _ = std::fs::remove_dir_all(&dir);

        let mut combined = rows_by_key(&first);
        for (key, rows) in rows_by_key(&second) {
            combined.entry(key).or_default().extend(rows);
        }
        assert_eq!(
            combined, expected,
            "{name}: {before} → {after} processors, stopped at row {position}"
        );
    }
}

#[tokio::test]
async fn a_range_over_window_restored_from_a_savepoint_goes_on_where_it_stood() {
    restored_runs_equal_the_whole("over-range", RANGE, 5, false).await;
}

#[tokio::test]
async fn a_rows_over_window_restored_from_a_savepoint_goes_on_where_it_stood() {
    restored_runs_equal_the_whole("over-rows", ROWS_FRAME, 5, false).await;
}

#[tokio::test]
async fn an_over_window_without_partition_by_restored_from_a_savepoint_goes_on_where_it_stood() {
    restored_runs_equal_the_whole("over-whole", UNPARTITIONED, 5, false).await;
}

/// With the disk backend at the smallest budget, most of 400 keys (a row of each every 40 s)
/// wait on disk with their frames when the savepoint is taken: the savepoint holds them, and
/// a run restored from it, on disk or in memory, goes on with each key's frame.
#[tokio::test]
async fn over_windows_with_keys_on_disk_restored_from_a_savepoint_go_on_where_they_stood() {
    restored_runs_equal_the_whole("over-range-disk", RANGE, 400, true).await;
    restored_runs_equal_the_whole("over-rows-disk", ROWS_FRAME, 400, true).await;
}
