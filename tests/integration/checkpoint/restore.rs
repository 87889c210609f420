//! A query stopped at a savepoint and restored from it, and periodic checkpoints.

use std::time::Duration;

use udf_runtime::Checkpoint;

use futures::StreamExt;

use super::*;

/// Runs `queries.0` (its uid written `{uid}`) over the first `first` rows (in batches of
/// 64) with `partitions.0` processors and the watermark `delay` behind, stops it at a
/// savepoint, restores `queries.1` with `partitions.1` processors from it, sends the rest
/// from the savepoint's position, and gives both runs' output.
async fn stopped_and_restored(
    input: &RecordBatch,
    first: usize,
    partitions: (usize, usize),
    name: &str,
    queries: (&str, &str),
    delay: Duration,
) -> (BTreeMap<String, Vec<Vec<Value>>>, Checkpoint) {
    let (first_query, restored_query) = queries;
    let checkpoints = scratch(name);
    let uid = own(name);
    let (session, feed) = delayed_session(partitions.0, delay);
    // Checkpoints on, but none due during the test: only the savepoint is taken.
    checkpoint_every(&session, "1 h", &checkpoints.join("periodic"));
    let mut output = session
        .sql(&first_query.replace("{uid}", &uid))
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    let sending = {
        let (feed, input) = (feed.clone(), input.clone());
        tokio::spawn(async move { send(&feed, &input, 0..first, 64).await })
    };
    // Some output first, so the query has read rows when the savepoint is taken.
    let mut early = Vec::new();
    while early.iter().map(RecordBatch::num_rows).sum::<usize>() < first / 4 {
        let batch = tokio::time::timeout(Duration::from_secs(30), output.next()).await;
        early.push(
            batch
                .expect("output within 30 s")
                .expect("more output")
                .unwrap(),
        );
    }
    let before = tokio::spawn(drain(output));
    sending.await.unwrap();
    let savepoint = session
        .stop_with_savepoint(&uid, checkpoints.join("savepoints"))
        .await;
    early.extend(before.await.unwrap());
    let before = early;
    let savepoint = savepoint.unwrap();
    let checkpoint = Checkpoint::find(&savepoint, &uid).unwrap();
    assert!(checkpoint.is_savepoint());
    let position = checkpoint.position("events").unwrap() as usize;
    // The feed's rows not yet read when the barrier left are not in it.
    assert!(position <= first, "{position} > {first}");
    let stats = session.checkpoint_stats(&uid).unwrap();
    assert_eq!(stats.last_path.as_deref(), Some(savepoint.as_path()));
    assert!(stats.last_bytes > 0);

    let (session, feed) = delayed_session(partitions.1, delay);
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    let restored_query = restored_query.replace("{uid}", &uid);
    let after = running(&session, &restored_query).await;
    send(&feed, input, position..input.num_rows(), 64).await;
    feed.close();
    let after = after.await.unwrap();
    assert_eq!(
        session
            .checkpoint_stats(&uid)
            .unwrap()
            .restored_from
            .as_deref(),
        Some(checkpoint.dir())
    );

    let mut combined = by_key(&before);
    for (key, rows) in by_key(&after) {
        combined.entry(key).or_default().extend(rows);
    }
    let _ = std::fs::remove_dir_all(&checkpoints);
    (combined, checkpoint)
}

crate::on_both_backends! {
    async fn a_query_stopped_at_a_savepoint_and_restored_gives_the_uninterrupted_output() {
        let input = input(3000, 37);
        // Restored with as many processors as saved, and with fewer or more: each processor
        // then takes its keys from every saved processor's state.
        for (partitions, first) in [((1, 1), 1000), ((2, 2), 1700), ((2, 3), 1200), ((3, 1), 900)] {
            let expected = uninterrupted(&input, partitions.1).await;
            let rows: usize = expected.values().map(Vec::len).sum();
            // Every row, and an idle report per key at the end and per gap (7 gaps, 37 keys) —
            // but one: the first row after a gap is processed under the watermark before it,
            // so its key registers a new idle timer, replacing the one due (rule 26).
            assert_eq!(rows, 3000 + 37 + 7 * 36);
            let name = format!("stop-{}-{}", partitions.0, partitions.1);
            let (combined, savepoint) =
                stopped_and_restored(&input, first, partitions, &name, (&query("{uid}"), &query("{uid}")), Duration::ZERO).await;
            assert!(savepoint.position("events").unwrap() > 0);
            assert_eq!(combined, expected, "{partitions:?} processors, stopped after {first} rows");
        }
    }

    async fn rows_waiting_for_order_by_move_with_their_keys_to_another_processor_count() {
        let ordered = "SELECT * FROM Tally(input => TABLE events PARTITION BY k ORDER BY ts, on_time => DESCRIPTOR(ts), uid => '{uid}')";
        // Every tenth row a second late: ORDER BY holds rows back until the watermark passes.
        let input = input(2000, 23);
        let ts = input.column(2).as_any().downcast_ref::<udf_core::arrow::array::TimestampMillisecondArray>().unwrap();
        let shifted: udf_core::arrow::array::TimestampMillisecondArray = ts
            .iter()
            .enumerate()
            .map(|(i, t)| t.map(|t| if i % 10 == 0 { t - 1000 } else { t }))
            .collect::<udf_core::arrow::array::TimestampMillisecondArray>()
            .with_data_type(udf_core::arrow::array::Array::data_type(ts).clone());
        let input = RecordBatch::try_new(
            input.schema(),
            vec![input.column(0).clone(), input.column(1).clone(), Arc::new(shifted)],
        )
        .unwrap();
        for (partitions, first) in [((2, 3), 1100), ((3, 1), 700)] {
            // Rows wait for a watermark two seconds behind.
            let delay = Duration::from_secs(2);
            let expected = uninterrupted_query(&input, partitions.1, ordered, delay).await;
            let name = format!("ordered-{}-{}", partitions.0, partitions.1);
            let (combined, _) =
                stopped_and_restored(&input, first, partitions, &name, (ordered, ordered), delay).await;
            assert_eq!(combined, expected, "{partitions:?} processors, stopped after {first} rows");
        }
    }

    async fn a_changed_query_keeps_the_state_of_its_uid() {
        // The restored query filters on a column the first did not: its state is found by
        // uid all the same, so each key's counts go on from the savepoint.
        let input = input(2000, 11);
        let (combined, savepoint) = stopped_and_restored(
            &input,
            1000,
            (2, 2),
            "changed",
            (&query("{uid}"),
            "SELECT * FROM Tally(input => TABLE (SELECT * FROM events WHERE word <> 'ant') PARTITION BY k, on_time => DESCRIPTOR(ts), uid => '{uid}')"),
            Duration::ZERO,
        )
        .await;
        let position = savepoint.position("events").unwrap() as usize;
        // What to expect: the uninterrupted query over the rows before the savepoint and, after
        // it, the rows without 'ant' — computed by one query over such an input, whose timers
        // fire as the restored query's do.
        let words = input.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        let keep: Vec<bool> = (0..input.num_rows())
            .map(|i| i < position || words.value(i) != "ant")
            .collect();
        let filtered = udf_core::arrow::compute::filter_record_batch(
            &input,
            &udf_core::arrow::array::BooleanArray::from(keep),
        )
        .unwrap();
        let expected = uninterrupted(&filtered, 2).await;
        assert_eq!(combined, expected);
    }

    async fn periodic_checkpoints_complete_and_the_newest_are_kept() {
        let checkpoints = scratch("periodic");
        let uid = own("periodic");
        let (session, feed) = fed_session(2);
        checkpoint_every(&session, "20 ms", &checkpoints);
        session.set_option("execution.checkpointing.num-retained", "2").unwrap();
        let drained = running(&session, &query(&uid)).await;
        let input = input(2000, 13);
        // Slowly enough that several checkpoints are taken along the way (bounded: 10 s).
        let started = std::time::Instant::now();
        for start in (0..2000).step_by(100) {
            send(&feed, &input, start..start + 100, 50).await;
            tokio::time::sleep(Duration::from_millis(15)).await;
            let done = session.checkpoint_stats(&uid).map_or(0, |s| s.completed);
            if start >= 1000 && done >= 3 || started.elapsed() > Duration::from_secs(10) {
                break;
            }
        }
        // What the feed may drop: the rows the latest checkpoint covers. The feed hears of a
        // checkpoint just after its manifest is written: at least the newest found, once that
        // moment has passed (bounded: a second).
        let wanted = Checkpoint::find(&checkpoints, &uid).unwrap().position("events").unwrap();
        let waiting = std::time::Instant::now();
        while feed.durable_rows() < wanted && waiting.elapsed() < Duration::from_secs(1) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let durable = feed.durable_rows();
        assert!(durable > 0);
        assert!(durable >= wanted, "{durable} < {wanted}");
        // Once the query is over no checkpoint is under way: the statistics and the directory
        // agree on the newest (the final one, at the end of input).
        feed.close();
        drained.await.unwrap();
        let stats = session.checkpoint_stats(&uid).unwrap();
        assert!(stats.completed >= 3, "{stats:?}");
        assert_eq!(stats.failed, 0, "{stats:?}");
        let newest = Checkpoint::find(&checkpoints, &uid).unwrap();
        assert_eq!(newest.dir(), stats.last_path.as_deref().unwrap());
        let kept: Vec<String> = std::fs::read_dir(checkpoints.join(&uid))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.starts_with("chk-"))
            .collect();
        // The two newest complete ones, and perhaps one under way when the input ended.
        assert!((2..=3).contains(&kept.len()), "{kept:?}");
        let _ = std::fs::remove_dir_all(&checkpoints);
    }
}
