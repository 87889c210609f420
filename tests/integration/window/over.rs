//! OVER windows over a stream, ordered by a time attribute (rule 45): each row goes out once
//! the watermark passes its time, with the aggregates over its frame.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use udf_core::arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use udf_core::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use udf_runtime::Session;

use crate::support::{self, session_of};

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("k", DataType::Utf8, false),
        Field::new("v", DataType::Int64, false),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
    ]))
}

/// Rows `(k, v, ts ms)`, sent one per batch with the watermark `ts - 1 s` after each; late
/// `a 100 @ 2 s` comes after `a`'s rows at 3 s went out.
const ROWS: [(&str, i64, i64); 8] = [
    ("a", 1, 1_000),
    ("a", 2, 3_000),
    ("b", 10, 3_000),
    ("a", 4, 3_000),
    ("a", 8, 7_000),
    ("a", 16, 9_000),
    ("a", 100, 2_000),
    ("b", 1, 8_500),
];

/// The query's output over `ROWS` fed one row per batch, as `k v ts result...`.
async fn run(session: &Session, sql: &str) -> Vec<String> {
    let feed = session.register_feed("events", schema()).unwrap();
    session.declare_watermark("events", "ts", Duration::from_secs(1));
    let mut output = session
        .sql(sql)
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    let sender = tokio::spawn(async move {
        for (k, v, ts) in ROWS {
            let batch = RecordBatch::try_new(
                schema(),
                vec![
                    Arc::new(StringArray::from(vec![k])),
                    Arc::new(Int64Array::from(vec![v])),
                    Arc::new(TimestampMillisecondArray::from(vec![ts])),
                ],
            )
            .unwrap();
            feed.send(batch).await.unwrap();
        }
    });
    let mut rows = Vec::new();
    while let Some(batch) = output.next().await {
        rows.extend(support::batches_to_rows(&[batch.unwrap()]));
    }
    sender.await.unwrap();
    rows.iter()
        .map(|r| {
            let mut parts: Vec<String> = r.iter().map(ToString::to_string).collect();
            // The time as seconds.
            parts[2] = parts[2].trim_start_matches("1970-01-01 00:00:").to_owned();
            parts.join(" ")
        })
        .collect()
}

/// RANGE: rows of the same time go out together with the same sum; rows more than 5 s
/// older leave the frame.
#[tokio::test]
async fn a_range_frame_sums_the_last_five_seconds_of_event_time() {
    let sql = "SELECT k, v, ts, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW) AS total FROM events";
    assert_eq!(
        run(&session_of(1), sql).await,
        [
            "a 1 01 1",
            "a 2 03 7",
            "a 4 03 7",
            "b 10 03 10",
            "a 8 07 14",
            "b 1 08.500 1",
            "a 16 09 24",
        ]
    );
    // Two processors: the same rows, each key in the same order.
    let mut two = run(&session_of(2), sql).await;
    two.sort_by_key(|r| r.split(' ').next().map(str::to_owned));
    assert_eq!(
        two,
        [
            "a 1 01 1",
            "a 2 03 7",
            "a 4 03 7",
            "a 8 07 14",
            "a 16 09 24",
            "b 10 03 10",
            "b 1 08.500 1",
        ]
    );
}

/// ROWS: the row and the one before it in time order, one row at a time.
#[tokio::test]
async fn a_rows_frame_counts_rows_in_time_order() {
    let sql = "SELECT k, v, ts, SUM(v) OVER w AS total, COUNT(*) OVER w AS n FROM events WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)";
    assert_eq!(
        run(&session_of(1), sql).await,
        [
            "a 1 01 1 1",
            "a 2 03 3 2",
            "a 4 03 6 2",
            "b 10 03 10 1",
            "a 8 07 12 2",
            "b 1 08.500 11 2",
            "a 16 09 24 2",
        ]
    );
}

#[tokio::test]
async fn late_rows_of_an_over_window_are_dropped_and_counted() {
    let session = session_of(1);
    let sql = "SELECT k, v, MAX(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS top FROM events";
    let feed = session.register_feed("events", schema()).unwrap();
    session.declare_watermark("events", "ts", Duration::from_secs(1));
    let batch = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(StringArray::from_iter_values(ROWS.iter().map(|r| r.0))),
            Arc::new(Int64Array::from_iter_values(ROWS.iter().map(|r| r.1))),
            Arc::new(TimestampMillisecondArray::from_iter_values(
                ROWS.iter().map(|r| r.2),
            )),
        ],
    )
    .unwrap();
    let plan = session
        .sql(&format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    let running = tokio::spawn(async move { plan.collect().await });
    feed.send(batch).await.unwrap();
    drop(feed);
    let text = support::batches_to_rows(&running.await.unwrap().unwrap())[0][1].to_string();
    // In one batch too the watermark moves after every row: `a`'s rows at 3 s go out before
    // `a 100 @ 2 s` is read, which is then late.
    assert_eq!(support::metric(&text, "late_rows_dropped"), 1.0, "{text}");
}

#[tokio::test]
async fn over_windows_over_a_stream_refuse_what_they_cannot_compute() {
    let session = session_of(1);
    session
        .register(udf_examples::aggregate::weighted_avg::WeightedAvg)
        .unwrap();
    let _feed = session.register_feed("events", schema()).unwrap();
    session.declare_watermark("events", "ts", Duration::from_secs(1));
    let error = |sql: &'static str| {
        let session = &session;
        async move {
            session
                .sql(sql)
                .await
                .unwrap()
                .create_physical_plan()
                .await
                .unwrap_err()
                .to_string()
        }
    };
    let following = error("SELECT SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM events").await;
    assert!(
        following.contains("an OVER frame ends at CURRENT ROW"),
        "{following}"
    );
    let by_value = error("SELECT SUM(v) OVER (PARTITION BY k ORDER BY v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM events").await;
    assert!(
        by_value.contains("must ORDER BY one time column, ascending, with a watermark"),
        "{by_value}"
    );
    let ranked = error("SELECT ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) FROM events").await;
    assert!(
        ranked.contains("OVER windows compute aggregate functions only"),
        "{ranked}"
    );
}
