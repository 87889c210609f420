//! A table aggregate's changelog over a fed table takes part in checkpoints: stopped at a
//! savepoint and restored (with as many partitions, or more), it goes on with each group's
//! accumulator, so the two runs give together exactly the uninterrupted changelog.

use std::sync::Arc;

use udf_core::arrow::array::Int32Array;
use udf_examples::table_aggregate::top2::Top2;
use udf_runtime::Checkpoint;

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

crate::on_both_backends! {
    async fn a_table_aggregate_changelog_restored_from_a_savepoint_goes_on_where_it_stood() {
        let input = top2_input();
        let expected = {
            let (session, feed) = top2_session(2);
            let output = session.sql(&top2_query("whole")).await.unwrap().execute_stream().await.unwrap();
            let drained = tokio::spawn(drain(output));
            send(&feed, &input, 0..ROWS, 50).await;
            feed.close();
            changes(&drained.await.unwrap())
        };
        assert_eq!(expected.len(), 7);

        for (before, after) in [(2, 2), (2, 3)] {
            let name = format!("top2-{before}-{after}");
            let (dir, uid) = (scratch(&name), own(&name));
            let (session, feed) = top2_session(before);
            checkpoint_every(&session, "1 h", &dir.join("periodic"));
            let output = session.sql(&top2_query(&uid)).await.unwrap().execute_stream().await.unwrap();
            let drained = tokio::spawn(drain(output));
            send(&feed, &input, 0..ROWS / 2, 50).await;
            let savepoint = session.stop_with_savepoint(&uid, dir.join("savepoints")).await.unwrap();
            let first = drained.await.unwrap();
            let position = Checkpoint::find(&savepoint, &uid).unwrap().position("events").unwrap() as usize;
            assert!(position > 0 && position <= ROWS / 2, "{position}");

            let (session, feed) = top2_session(after);
            session
                .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
                .unwrap();
            let output = session.sql(&top2_query(&uid)).await.unwrap().execute_stream().await.unwrap();
            let drained = tokio::spawn(drain(output));
            send(&feed, &input, position..ROWS, 50).await;
            feed.close();
            let second = drained.await.unwrap();

            let mut combined = changes(&first);
            for (key, rows) in changes(&second) {
                combined.entry(key).or_default().extend(rows);
            }
            assert_eq!(combined, expected, "{before} → {after} partitions, stopped at row {position}");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[tokio::test]
async fn a_table_aggregate_changelog_without_uid_is_refused_when_checkpointing() {
    let (session, _feed) = top2_session(2);
    checkpoint_every(&session, "1 s", std::path::Path::new("/tmp/unused"));
    let error = match session
        .sql("SELECT * FROM Top2(input => TABLE events PARTITION BY k, changelog => TRUE)")
        .await
    {
        Ok(df) => df.create_physical_plan().await.unwrap_err().to_string(),
        Err(error) => error.to_string(),
    };
    assert!(
        error.contains("the table aggregate `top2` has no uid: give it `.uid(\"...\")`"),
        "{error}"
    );
}
