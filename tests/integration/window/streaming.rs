//! Over a stream, a window's row comes once the watermark passes the window's end, while the
//! input goes on; rows behind a fired window are dropped and counted.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use udf_core::arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use udf_core::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use udf_runtime::datafusion::execution::SendableRecordBatchStream;

use crate::support::{self, session_of};

pub(super) fn schema() -> Arc<Schema> {
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

fn rows(rows: &[(&str, i64, i64)]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(TimestampMillisecondArray::from_iter_values(
                rows.iter().map(|r| r.2),
            )),
        ],
    )
    .unwrap()
}

const QUERY: &str = "SELECT window_start, k, SUM(v) AS total FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k";

/// `QUERY`'s output, as it comes.
async fn running(session: &udf_runtime::Session) -> SendableRecordBatchStream {
    session
        .sql(QUERY)
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap()
}

/// Rule 42: the window's row arrives before the input ends.
#[tokio::test]
async fn a_window_fires_when_the_watermark_passes_its_end() {
    let session = session_of(2);
    let feed = session.register_feed("events", schema()).unwrap();
    session.declare_watermark("events", "ts", Duration::ZERO);
    let mut output = running(&session).await;
    feed.send(rows(&[("a", 1, 1_000), ("b", 2, 2_000), ("a", 3, 9_999)]))
        .await
        .unwrap();
    feed.send(rows(&[("a", 4, 10_500)])).await.unwrap();
    let mut fired = Vec::new();
    // Both keys of window [0 s, 10 s) come, perhaps from two processors (bounded wait).
    while fired.len() < 2 {
        let batch = tokio::time::timeout(Duration::from_secs(10), output.next())
            .await
            .expect("the window fires while the feed is open")
            .expect("the output goes on")
            .unwrap();
        fired.extend(support::batches_to_rows(&[batch]));
    }
    let mut fired: Vec<String> = fired
        .iter()
        .map(|r| format!("{} {} {}", r[0], r[1], r[2]))
        .collect();
    fired.sort();
    assert_eq!(
        fired,
        ["1970-01-01 00:00:00 a 4", "1970-01-01 00:00:00 b 2"]
    );
    // A row of the fired window is late: dropped.
    feed.send(rows(&[("b", 100, 5_000), ("a", 5, 19_000)]))
        .await
        .unwrap();
    drop(feed);
    let mut rest = Vec::new();
    while let Some(batch) = output.next().await {
        rest.extend(support::batches_to_rows(&[batch.unwrap()]));
    }
    let rest: Vec<String> = rest
        .iter()
        .map(|r| format!("{} {} {}", r[0], r[1], r[2]))
        .collect();
    assert_eq!(rest, ["1970-01-01 00:00:10 a 9"]);
}

/// Rule 43: a row whose window has fired is dropped and counted (`late_rows_dropped`).
#[tokio::test]
async fn late_rows_are_counted() {
    let session = session_of(1);
    session
        .register_batch(
            "events",
            rows(&[
                ("a", 1, 1_000),
                ("a", 2, 12_000),
                ("a", 3, 2_000),
                ("b", 4, 3_000),
                ("a", 5, 15_000),
            ]),
        )
        .unwrap();
    session.declare_watermark("events", "ts", Duration::from_secs(1));
    let plan = support::rows(&session, &format!("EXPLAIN ANALYZE {QUERY}")).await;
    let text = plan[0][1].to_string();
    assert_eq!(support::metric(&text, "late_rows_dropped"), 2.0, "{text}");
    let totals: Vec<String> = support::rows(&session, QUERY)
        .await
        .iter()
        .map(|r| format!("{} {}", r[1], r[2]))
        .collect();
    assert_eq!(totals, ["a 1", "a 7"]);
}

/// A batch's rows share their watermark (`EveryBatch`), and their times jump between
/// windows and back: each window takes exactly its rows, and rows behind a fired window are
/// dropped in the middle of a batch while the rows around them count.
#[tokio::test]
async fn rows_of_one_watermark_that_jump_between_windows_each_join_their_own() {
    let session = session_of(1);
    let feed = session.register_feed("events", schema()).unwrap();
    session.declare_watermark_with(
        "events",
        "ts",
        Duration::ZERO,
        udf_runtime::WatermarkEmission::EveryBatch,
    );
    let output = running(&session).await;
    let batches = [
        vec![
            ("a", 1, 1_000),
            ("a", 2, 12_000),
            ("b", 4, 3_000),
            ("a", 8, 15_000),
            ("b", 16, 11_000),
        ],
        // Its watermark (15 s, the latest time before it) fires [0 s, 10 s).
        vec![("a", 32, 25_000)],
        // At 25 s, [10 s, 20 s) has fired too: `b` at 5 s and 9.999 s are late.
        vec![
            ("b", 64, 5_000),
            ("a", 128, 26_000),
            ("b", 256, 9_999),
            ("a", 512, 27_000),
        ],
    ];
    for batch in &batches {
        feed.send(rows(batch)).await.unwrap();
    }
    drop(feed);
    let batches: Vec<RecordBatch> = output.map(|b| b.unwrap()).collect().await;
    let fired: Vec<String> = support::batches_to_rows(&batches)
        .iter()
        .map(|r| format!("{} {} {}", r[0], r[1], r[2]))
        .collect();
    let mut sorted = fired.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "1970-01-01 00:00:00 a 1",
            "1970-01-01 00:00:00 b 4",
            "1970-01-01 00:00:10 a 10",
            "1970-01-01 00:00:10 b 16",
            "1970-01-01 00:00:20 a 672",
        ]
    );
    // Windows come in the order of their ends.
    let starts: Vec<&str> = fired.iter().map(|r| &r[..19]).collect();
    assert!(starts.is_sorted(), "{fired:?}");
}
