//! Rule 7: an error or panic inside a function fails the query with an error naming the
//! function and the row; the process carries on.

use udf_core::prelude::*;
use udf_examples::scalar::substring::substring;
use udf_runtime::Session;

use crate::support::{error, rows};

#[scalar_function]
fn fragile(s: &str) -> i32 {
    if s == "boom" {
        panic!("cannot handle `{s}`");
    }
    s.len() as i32
}

/// A plain numeric function takes the vectorized path: its panic is located by a replay.
#[scalar_function]
fn ratio(a: i64, b: i64) -> i64 {
    a / b
}

#[tokio::test]
async fn a_returned_error_names_function_row_and_arguments() {
    let session = Session::new();
    session.register(substring).unwrap();
    let message = error(
        &session,
        "SELECT SubstringFunction(s, 0, 4) FROM (VALUES ('abcdef'), ('ab')) AS t(s)",
    )
    .await;
    assert!(
        message.contains("function `substringfunction` failed: begin 0, end 4, length 2 (row 1 of the batch, arguments: s => 'ab', begin => 0, end => 4)"),
        "{message}"
    );
}

#[tokio::test]
async fn a_panic_becomes_a_query_error_and_the_session_survives() {
    let session = Session::new();
    session.register(fragile).unwrap();
    session.register(ratio).unwrap();
    let message = error(
        &session,
        "SELECT fragile(s) FROM (VALUES ('ok'), ('boom')) AS t(s)",
    )
    .await;
    assert!(
        message.contains("function `fragile` panicked: cannot handle `boom` (row 1 of the batch, arguments: s => 'boom')"),
        "{message}"
    );

    let sql = "SELECT ratio(a, b) FROM (VALUES (CAST(6 AS BIGINT), CAST(3 AS BIGINT)), (1, 0)) AS t(a, b)";
    let message = error(&session, sql).await;
    assert!(
        message.contains("function `ratio` panicked: attempt to divide by zero"),
        "{message}"
    );
    assert!(
        message.contains("row 1 of the batch, arguments: a => 1, b => 0"),
        "{message}"
    );

    assert_eq!(
        rows(&session, "SELECT fragile('fine')").await,
        vec![vec![udf_core::Value::Int(4)]],
        "the session still works"
    );
}
