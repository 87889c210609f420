//! What cannot be checkpointed is refused when planned; a damaged checkpoint is passed over or
//! named; a restore that does not fit says why.

use super::*;

#[tokio::test]
async fn plans_that_cannot_be_checkpointed_are_refused_naming_the_operator() {
    let (session, _feed) = fed_session(2);
    session
        .set_option("execution.checkpointing.interval", "1 s")
        .unwrap();
    session
        .set_option("execution.checkpointing.dir", "/tmp/unused")
        .unwrap();
    let error = planning_error(
        &session,
        "SELECT * FROM Tally(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
    )
    .await;
    assert!(error.contains("has no uid: give it `uid =>"), "{error}");

    let error = planning_error(
        &session,
        &format!(
            "SELECT t.k FROM ({}) AS t JOIN (VALUES ('k1')) AS v(k) ON t.k = v.k",
            query("join")
        ),
    )
    .await;
    assert!(
        error.contains("`HashJoinExec` after the process table function"),
        "{error}"
    );

    let error = planning_error(&session, "SELECT * FROM events").await;
    assert!(error.contains("has no process table function"), "{error}");

    // A GROUP BY over a process table function's output: two operators keep state.
    let error = planning_error(
        &session,
        &format!(
            "SELECT what, COUNT(*) FROM ({}) GROUP BY what",
            query("two")
        ),
    )
    .await;
    assert!(
        error.contains("this query has 2 operators that keep state"),
        "{error}"
    );

    session.register_batch("archive", input(10, 2)).unwrap();
    session.declare_watermark("archive", "ts", Duration::ZERO);
    let error = planning_error(
        &session,
        "SELECT * FROM Tally(input => TABLE archive PARTITION BY k, on_time => DESCRIPTOR(ts), uid => 'a')",
    )
    .await;
    assert!(
        error.contains("the source `DataSourceExec` cannot record a position"),
        "{error}"
    );

    // A table aggregate's changelog over the feed keeps accumulators: checkpoints name them
    // by its uid.
    use udf_runtime::prelude::FlatAggregate as _;
    session
        .register(udf_examples::table_aggregate::top2::Top2)
        .unwrap();
    let length = udf_runtime::datafusion::functions::expr_fn::character_length(
        udf_runtime::datafusion::prelude::col("word"),
    );
    let top2 = session
        .table("events")
        .await
        .unwrap()
        .group_by(vec![udf_runtime::datafusion::prelude::ident("k")])
        .flat_aggregate(
            session
                .table_aggregate(
                    "Top2",
                    [udf_runtime::datafusion::logical_expr::cast(
                        length,
                        udf_runtime::datafusion::arrow::datatypes::DataType::Int32,
                    )],
                )
                .unwrap()
                .changelog(),
        )
        .unwrap();
    let error = top2.create_physical_plan().await.unwrap_err().to_string();
    assert!(
        error.contains("the table aggregate `top2` has no uid"),
        "{error}"
    );

    // A bounded query without state runs as a batch job, as in Flink.
    let rows = session
        .sql("SELECT count(*) FROM archive")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(rows[0].num_rows(), 1);

    // Filters and projections before the function pass barriers in order.
    planning_error_free(
        &session,
        "SELECT rows FROM Tally(input => TABLE (SELECT k, upper(word) AS word, ts FROM events WHERE k <> 'k1') PARTITION BY k, on_time => DESCRIPTOR(ts), uid => 'b') WHERE rows > 1",
    )
    .await;
}

async fn planning_error_free(session: &Session, sql: &str) {
    let df = session.sql(sql).await.unwrap();
    df.create_physical_plan()
        .await
        .unwrap_or_else(|e| panic!("{sql}\n{e}"));
}

#[tokio::test]
async fn checkpoints_need_a_directory() {
    let (session, _feed) = fed_session(1);
    session
        .set_option("execution.checkpointing.interval", "1 s")
        .unwrap();
    let output = session
        .sql(&query("nodir"))
        .await
        .unwrap()
        .execute_stream()
        .await;
    let error = match output {
        Ok(output) => drain_error(output).await,
        Err(error) => error.to_string(),
    };
    assert!(
        error.contains("execution.checkpointing.dir is not"),
        "{error}"
    );
}

async fn drain_error(mut output: SendableRecordBatchStream) -> String {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), output.next()).await {
            Ok(Some(Err(error))) => return error.to_string(),
            Ok(Some(Ok(_))) => {}
            Ok(None) => panic!("the query ended without an error"),
            Err(_) => panic!("no error within 10 s"),
        }
    }
}

/// Stops a query of `partitions` processors at a savepoint after 500 rows; gives its path.
async fn savepoint(name: &str, partitions: usize) -> PathBuf {
    let dir = scratch(name);
    let (session, feed) = fed_session(partitions);
    checkpoint_every(&session, "1 h", &dir);
    let drained = running(&session, &query(name)).await;
    send(&feed, &input(500, 5), 0..500, 100).await;
    let path = session.stop_with_savepoint(name, &dir).await.unwrap();
    drained.await.unwrap();
    path
}

/// The error of a query restored from `path` with `partitions` processors.
async fn restore_error(path: &std::path::Path, partitions: usize) -> String {
    let (session, feed) = fed_session(partitions);
    restored_error(session, feed, path, "damaged").await
}

/// The error of the `Tally` query of `session` with `uid`, restored from `path`.
async fn restored_error(
    session: Session,
    feed: udf_runtime::Feed,
    path: &std::path::Path,
    uid: &str,
) -> String {
    session
        .set_option("execution.state-recovery.path", path.to_str().unwrap())
        .unwrap();
    let output = session
        .sql(&query(uid))
        .await
        .unwrap()
        .execute_stream()
        .await;
    feed.close();
    match output {
        Ok(output) => drain_error(output).await,
        Err(error) => error.to_string(),
    }
}

#[tokio::test]
async fn a_damaged_or_unfitting_checkpoint_is_a_clear_error() {
    let path = savepoint("damaged", 2).await;
    let state = path.join("state-1");
    let bytes = std::fs::read(&state).unwrap();

    std::fs::write(&state, &bytes[..bytes.len() / 2]).unwrap();
    let error = restore_error(&path, 2).await;
    assert!(
        error.contains("state-1 has") && error.contains("its manifest says"),
        "{error}"
    );

    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    std::fs::write(&state, &flipped).unwrap();
    let error = restore_error(&path, 2).await;
    assert!(
        error.contains("state-1 is corrupted: its checksum does not match"),
        "{error}"
    );

    std::fs::write(&state, &bytes).unwrap();

    std::fs::remove_file(path.join("_manifest")).unwrap();
    let error = restore_error(&path, 2).await;
    assert!(error.contains("holds no checkpoint"), "{error}");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn restore_takes_the_newest_complete_checkpoint_of_a_directory() {
    let dir = scratch("newest");
    let (session, feed) = fed_session(1);
    checkpoint_every(&session, "10 ms", &dir);
    session
        .set_option("execution.checkpointing.num-retained", "3")
        .unwrap();
    let drained = running(&session, &query("newest")).await;
    let input = input(400, 5);
    for start in (0..400).step_by(50) {
        send(&feed, &input, start..start + 50, 50).await;
        let done = session
            .checkpoint_stats("newest")
            .map_or(0, |s| s.completed);
        if done >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    feed.close();
    drained.await.unwrap();
    let ids: Vec<PathBuf> = {
        let mut found: Vec<(u64, PathBuf)> = std::fs::read_dir(dir.join("newest"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("_manifest").exists())
            .map(|p| {
                (
                    p.file_name().unwrap().to_str().unwrap()[4..]
                        .parse()
                        .unwrap(),
                    p,
                )
            })
            .collect();
        found.sort();
        found.into_iter().map(|(_, p)| p).collect()
    };
    assert!(ids.len() >= 2, "{ids:?}");
    let newest = ids.last().unwrap();
    assert_eq!(
        udf_runtime::Checkpoint::find(&dir, "newest").unwrap().dir(),
        newest
    );
    // The newest truncated: the one before it is taken.
    let state = newest.join("state-0");
    let bytes = std::fs::read(&state).unwrap();
    std::fs::write(&state, &bytes[..bytes.len() - 1]).unwrap();
    assert_eq!(
        udf_runtime::Checkpoint::find(&dir, "newest").unwrap().dir(),
        &ids[ids.len() - 2]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `Tally` as a later version of the program declares it: the `seen` entry's type changed.
mod changed {
    use super::*;

    /// Renamed: the same fields under another name.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Counted {
        rows: i64,
    }

    /// The same name as the saved one, with a field more.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Seen {
        rows: i64,
        first: String,
    }

    pub struct Renamed;

    #[ptf(name = "Tally")]
    impl Renamed {
        fn eval(
            &self,
            #[state(ttl = "1 h")] seen: &mut Counted,
            #[state] words: &mut MapView<String, i64>,
            #[argument(set_semantic_table, require_on_time)] input: Event,
            out: &mut Collector<Tallied>,
        ) {
            seen.rows += words.len() as i64;
            out.collect(Tallied {
                rows: seen.rows,
                same_word: 0,
                what: input.word,
            });
        }
    }

    pub struct Widened;

    #[ptf(name = "Tally")]
    impl Widened {
        fn eval(
            &self,
            #[state(ttl = "1 h")] seen: &mut Seen,
            #[state] words: &mut MapView<String, i64>,
            #[argument(set_semantic_table, require_on_time)] input: Event,
            out: &mut Collector<Tallied>,
        ) {
            seen.rows += words.len() as i64;
            seen.first.clone_from(&input.word);
            out.collect(Tallied {
                rows: seen.rows,
                same_word: 0,
                what: input.word,
            });
        }
    }
}

/// A session of two processors running `function` as `Tally` over a fed `events` table.
fn changed_session(function: impl udf_core::UserFunction) -> (Session, udf_runtime::Feed) {
    let session = crate::support::session_of(2);
    session.register(function).unwrap();
    let feed = session.register_feed("events", schema()).unwrap();
    session.declare_watermark("events", "ts", Duration::ZERO);
    (session, feed)
}

#[tokio::test]
async fn a_state_entry_whose_type_changed_is_an_error_naming_uid_and_entry() {
    let path = savepoint("retyped", 2).await;

    let (session, feed) = changed_session(changed::Renamed);
    let error = restored_error(session, feed, &path, "retyped").await;
    assert!(
        error.contains("uid `retyped`")
            && error.contains("state entry `seen` of `tally` was saved as value state `Seen`")
            && error.contains("now declares value state `Counted`")
            && !error.contains("Execution error: state"),
        "{error}"
    );

    // Declared by the same name, but its bytes do not read as the new fields.
    let (session, feed) = changed_session(changed::Widened);
    let error = restored_error(session, feed, &path, "retyped").await;
    assert!(
        error.contains("uid `retyped`")
            && error.contains("state entry `seen`")
            && error.contains("does not read as `Seen`"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
