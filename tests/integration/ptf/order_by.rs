//! ORDER BY on a set-semantics table (rules 30, 31): rows reach `eval` in time order (more
//! columns break ties) once the watermark passes them; late rows are dropped and counted.
//! Without ORDER BY late rows reach `eval`.

use std::time::Duration;

use udf_core::Value;
use udf_core::prelude::*;
use udf_runtime::datafusion::physical_plan::collect;

use crate::row;
use crate::support::{column, error, rows, session_with_partitions, strs};

/// Emits the `priority` of every row it sees (NULL as -1).
#[ptf(name = "my_ptf")]
fn my_ptf(
    #[argument(set_semantic_table, name = "input_table")] input: Row,
    out: &mut Collector<i32>,
) {
    out.collect(
        input
            .field("priority")
            .and_then(Value::as_i32)
            .unwrap_or(-1),
    );
}

fn source_table() -> Vec<crate::support::Column> {
    let millis = [5000, 1000, 3000, 1000, 1000, 9000, 2000, 12_000];
    vec![
        column("user_id", "STRING", strs(&[Some("u"); 8])),
        column(
            "event_time",
            "TIMESTAMP_LTZ(3)",
            millis
                .iter()
                .map(|m| Value::TimestampLtz(chrono::DateTime::from_timestamp_millis(*m).unwrap()))
                .collect(),
        ),
        column(
            "priority",
            "INT",
            vec![
                Value::Int(1),
                Value::Int(2),
                Value::Int(3),
                Value::Null,
                Value::Int(7),
                Value::Int(4),
                Value::Int(5),
                Value::Int(6),
            ],
        ),
    ]
}

#[tokio::test]
async fn rows_arrive_in_time_order_and_late_rows_are_dropped() {
    let session = session_with_partitions("source_table", &source_table(), 1);
    session.declare_watermark("source_table", "event_time", Duration::from_millis(1000));
    session.register(my_ptf).unwrap();
    // The SQL of the ProcessTableFunction documentation.
    let sql = "SELECT * FROM my_ptf(
                 input_table => TABLE source_table
                   PARTITION BY user_id
                   ORDER BY (event_time ASC, priority DESC NULLS FIRST)
               )";
    let df = session.sql(sql).await.unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    let batches = collect(plan.clone(), session.task_ctx()).await.unwrap();
    let seen: Vec<Value> = crate::support::batches_to_rows(&batches)
        .into_iter()
        .map(|r| r[1].clone())
        .collect();
    // Watermarks (max - 1 s): 4000 after the first row, so the rows at 1 s and 3 s that
    // follow are late; 8000 after the 9 s row; 11 000 after the last. The 2 s row is late
    // too. What is left comes out by time: 5 s, 9 s, then 12 s at the end of input.
    assert_eq!(seen, row![1, 4, 6]);
    let metrics = super::plans::ptf_metrics(&plan);
    assert_eq!(metrics("late_rows_dropped"), 5);

    // Ties: with a watermark far behind, nothing is late; the three rows at 1 s come out
    // by priority DESC NULLS FIRST.
    session.declare_watermark("source_table", "event_time", Duration::from_secs(60));
    assert_eq!(
        rows(&session, sql)
            .await
            .into_iter()
            .map(|r| r[1].clone())
            .collect::<Vec<_>>(),
        row![-1, 7, 2, 5, 3, 1, 4, 6]
    );
}

#[tokio::test]
async fn without_order_by_late_rows_reach_eval() {
    let session = session_with_partitions("source_table", &source_table(), 1);
    session.declare_watermark("source_table", "event_time", Duration::from_millis(1000));
    session.register(my_ptf).unwrap();
    let seen = rows(
        &session,
        "SELECT * FROM my_ptf(input_table => TABLE source_table PARTITION BY user_id)",
    )
    .await;
    assert_eq!(seen.len(), 8);
}

#[tokio::test]
async fn order_by_errors() {
    let session = session_with_partitions("source_table", &source_table(), 1);
    session.register(my_ptf).unwrap();
    let no_watermark = error(
        &session,
        "SELECT * FROM my_ptf(input_table => TABLE source_table PARTITION BY user_id ORDER BY event_time)",
    )
    .await;
    assert!(
        no_watermark.contains("`event_time` has no watermark"),
        "{no_watermark}"
    );
    session.declare_watermark("source_table", "event_time", Duration::ZERO);
    let descending = error(
        &session,
        "SELECT * FROM my_ptf(input_table => TABLE source_table PARTITION BY user_id ORDER BY (event_time DESC))",
    )
    .await;
    assert!(descending.contains("cannot be DESC"), "{descending}");
    let not_time = error(
        &session,
        "SELECT * FROM my_ptf(input_table => TABLE source_table PARTITION BY user_id ORDER BY priority)",
    )
    .await;
    assert!(
        not_time.contains("the first ORDER BY column of `my_ptf` must be a TIMESTAMP"),
        "{not_time}"
    );
}
