//! Async table functions in lateral joins: the guide's example, input order, concurrency.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use udf_core::Value;
use udf_core::prelude::*;
use udf_examples::asynchronous::async_background::AsyncBackgroundFunction;
use udf_runtime::prelude::*;

use crate::row;
use crate::support::{batches_to_rows, column, explain, rows, session_with, strs};

fn users() -> Session {
    session_with(
        "MyTable",
        &[column(
            "userId",
            "STRING",
            strs(&[Some("ann"), None, Some("bob")]),
        )],
    )
}

#[tokio::test]
async fn async_background_function_in_sql_and_with_the_dataframe_api() {
    let session = users();
    session.register(AsyncBackgroundFunction).unwrap();
    let left = rows(
        &session,
        "SELECT * FROM MyTable LEFT JOIN LATERAL TABLE(AsyncBackgroundFunction(\"userId\")) ON TRUE",
    )
    .await;
    assert_eq!(
        left,
        vec![
            row!["ann", "ann", "tour"],
            row![Value::Null, Value::Null, Value::Null],
            row!["bob", "bob", "tour"],
        ]
    );
    let joined = session
        .table("MyTable")
        .await
        .unwrap()
        .join_lateral(
            session
                .table_function("AsyncBackgroundFunction", [ident("userId")])
                .unwrap(),
        )
        .unwrap();
    assert_eq!(
        batches_to_rows(&joined.collect().await.unwrap()),
        vec![row!["ann", "ann", "tour"], row!["bob", "bob", "tour"]]
    );
    let inline = session
        .table("MyTable")
        .await
        .unwrap()
        .join_lateral(
            session
                .table_function_inline(AsyncBackgroundFunction, [ident("userId")])
                .unwrap()
                .alias(["u", "t"]),
        )
        .unwrap()
        .select(vec![col("t")])
        .unwrap();
    assert_eq!(
        batches_to_rows(&inline.collect().await.unwrap()),
        vec![row!["tour"], row!["tour"]]
    );
    let plan = explain(
        &session,
        "SELECT * FROM MyTable, LATERAL TABLE(AsyncBackgroundFunction(\"userId\"))",
    )
    .await;
    assert!(plan.contains("join=inner async"), "{plan}");
}

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MOST_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// `n` copies of `n`, after a delay that makes later rows finish first.
#[async_table_function]
async fn repeat_later(n: i32) -> Vec<i32> {
    let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
    MOST_IN_FLIGHT.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2 * (12 - n as u64))).await;
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    vec![n; n as usize]
}

#[tokio::test]
async fn rows_keep_the_input_order_with_bounded_concurrency() {
    let session = session_with(
        "counts",
        &[column("n", "INT", (0..12).map(Value::Int).collect())],
    );
    session.register(repeat_later).unwrap();
    session
        .set_option("table.exec.async-table.max-concurrent-operations", "3")
        .unwrap();
    let result = rows(
        &session,
        "SELECT n, f0 FROM counts LEFT JOIN LATERAL TABLE(repeat_later(n)) ON TRUE",
    )
    .await;
    let mut expected = vec![row![0, Value::Null]];
    for n in 1..12 {
        for _ in 0..n {
            expected.push(row![n, n]);
        }
    }
    assert_eq!(result, expected);
    assert_eq!(MOST_IN_FLIGHT.load(Ordering::SeqCst), 3);
}

/// Rejects negative numbers.
#[async_table_function]
async fn non_negative(n: i32) -> Result<Vec<i32>> {
    if n < 0 {
        bail!("{n} is negative");
    }
    Ok(vec![n])
}

#[tokio::test]
async fn a_failed_call_names_the_function_the_row_and_the_arguments() {
    let session = session_with(
        "numbers",
        &[column("n", "INT", vec![Value::Int(1), Value::Int(-2)])],
    );
    session.register(non_negative).unwrap();
    session
        .set_option("table.exec.async-table.retry-strategy", "NO_RETRY")
        .unwrap();
    let message = crate::support::error(
        &session,
        "SELECT f0 FROM numbers, LATERAL TABLE(non_negative(n))",
    )
    .await;
    assert!(
        message.contains(
            "function `non_negative` failed: -2 is negative (row 1 of the batch, arguments: n => -2)"
        ),
        "{message}"
    );
}

static REPEATS_CALLED: AtomicUsize = AtomicUsize::new(0);

/// Copies of `n`: none for multiples of three, else 10 to 16.
#[async_table_function]
async fn repeats(n: i64) -> Vec<i64> {
    REPEATS_CALLED.fetch_add(1, Ordering::SeqCst);
    vec![n; copies(n)]
}

fn copies(n: i64) -> usize {
    if n % 3 == 0 { 0 } else { 10 + (n % 7) as usize }
}

/// One input batch of 5,000 rows: calls are made a stretch of the batch at a time, so the
/// first output comes before most calls ran, and the joined rows keep the input order across
/// stretches (also for a LEFT join, whose empty rows fall on every stretch).
#[tokio::test]
async fn a_large_batch_is_called_in_stretches_in_order() {
    use futures::StreamExt;
    let n = 5000_i64;
    // One partition: nothing reads ahead of the consumer.
    let session = Session::with_config(
        udf_runtime::datafusion::prelude::SessionConfig::new().with_target_partitions(1),
    );
    let numbers =
        crate::support::batch(&[column("n", "BIGINT", (0..n).map(Value::BigInt).collect())]);
    session.register_batch("numbers", numbers).unwrap();
    session.register(repeats).unwrap();
    let mut output = session
        .sql("SELECT n, f0 FROM numbers, LATERAL TABLE(repeats(n))")
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    output.next().await.unwrap().unwrap();
    // The first stretch (1,024 rows) emits more than a batch.
    let called = REPEATS_CALLED.load(Ordering::SeqCst);
    assert!(called <= 1024, "{called} calls before the first batch");
    drop(output);

    for (join, on) in [(",", ""), ("LEFT JOIN", " ON TRUE")] {
        let got = rows(
            &session,
            &format!("SELECT n, f0 FROM numbers {join} LATERAL TABLE(repeats(n)){on}"),
        )
        .await;
        let mut expected = Vec::new();
        for i in 0..n {
            let copies = copies(i);
            if copies == 0 && !on.is_empty() {
                expected.push(vec![Value::BigInt(i), Value::Null]);
            }
            expected.extend((0..copies).map(|_| vec![Value::BigInt(i), Value::BigInt(i)]));
        }
        assert_eq!(got, expected, "{join}");
    }
}
