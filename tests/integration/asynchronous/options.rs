//! The options: timeouts (retries included), retry strategies, and checked keys and values.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use udf_core::Value;
use udf_core::prelude::*;

use crate::support::{column, error, rows, session_with};

/// Never answers in time.
#[async_scalar_function]
async fn stuck(n: i64) -> i64 {
    tokio::time::sleep(Duration::from_secs(60)).await;
    n
}

#[tokio::test]
async fn a_call_past_its_timeout_fails_the_query() {
    let session = session_with("t", &[column("n", "BIGINT", vec![Value::BigInt(3)])]);
    session.register(stuck).unwrap();
    session
        .set_option("table.exec.async-scalar.timeout", "30 ms")
        .unwrap();
    let message = error(&session, "SELECT stuck(n) FROM t").await;
    assert!(
        message.contains(
            "function `stuck` timed out after 30ms (retries included) (row 0 of the batch, arguments: n => 3)"
        ),
        "{message}"
    );
}

static ATTEMPTS: AtomicUsize = AtomicUsize::new(0);

/// Fails its first two attempts (counted over all rows), then answers.
#[async_scalar_function]
async fn flaky(n: i64) -> Result<i64> {
    if ATTEMPTS.fetch_add(1, Ordering::SeqCst) < 2 {
        bail!("not yet");
    }
    Ok(n * 10)
}

#[tokio::test]
async fn fixed_delay_retries_until_an_attempt_succeeds() {
    let session = session_with("t", &[column("n", "BIGINT", vec![Value::BigInt(4)])]);
    session.register(flaky).unwrap();
    session
        .set_option("table.exec.async-scalar.retry-strategy", "FIXED_DELAY")
        .unwrap();
    session
        .set_option("table.exec.async-scalar.retry-delay", "2 ms")
        .unwrap();
    session
        .set_option("table.exec.async-scalar.max-attempts", "3")
        .unwrap();
    assert_eq!(
        rows(&session, "SELECT flaky(n) FROM t").await,
        vec![vec![Value::BigInt(40)]]
    );
    assert_eq!(ATTEMPTS.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn keys_and_values_are_checked() {
    let session = crate::support::session_with("t", &[column("n", "BIGINT", vec![])]);
    let cases = [
        (
            "SET 'table.exec.async-scalar.speed' = '1'",
            "unknown option `table.exec.async-scalar.speed`",
        ),
        (
            "SET 'table.exec.async-table.max-concurrent-operations' = '0'",
            "`0` is not a whole number of at least 1",
        ),
        (
            "SET 'table.exec.async-scalar.timeout' = 'soon'",
            "`soon` is not a duration",
        ),
        (
            "SET 'table.exec.async-scalar.timeout' = '0 ms'",
            "`0 ms`: a timeout must be longer than 0",
        ),
        (
            "SET 'table.exec.async-scalar.timeout' = '999999999999999 d'",
            "`999999999999999 d` is longer than the longest duration",
        ),
        (
            "SET 'table.exec.async-table.retry-delay' = '18446744073709551615 h'",
            "is longer than the longest duration",
        ),
        (
            "SET 'table.exec.async-scalar.timeout' = 'PT10000000000000000000S10000000000000000000S'",
            "is not a duration",
        ),
        (
            "SET 'table.exec.async-table.retry-strategy' = 'EXPONENTIAL'",
            "`EXPONENTIAL` is not NO_RETRY or FIXED_DELAY",
        ),
    ];
    for (sql, expected) in cases {
        let message = error(&session, sql).await;
        assert!(message.contains(expected), "{sql}\n{message}");
    }
    // A valid value is set, and listed with the session's settings.
    session
        .sql("SET table.exec.async-table.timeout = '2 min'")
        .await
        .unwrap();
    let entries = session.copied_config().options().entries();
    let timeout = entries
        .iter()
        .find(|e| e.key == "table.exec.async-table.timeout")
        .and_then(|e| e.value.clone());
    assert_eq!(timeout.as_deref(), Some("120000 ms"));
}
