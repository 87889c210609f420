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
    // The panic's place stands in for the backtrace, which is not printed.
    assert!(
        message.contains("function `fragile` panicked: cannot handle `boom` (at tests/integration/scalar/errors.rs:")
            && message.contains(") (row 1 of the batch, arguments: s => 'boom')"),
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

#[async_scalar_function]
async fn fragile_later(s: &str) -> i32 {
    if s == "boom" {
        panic!("cannot await `{s}`");
    }
    s.len() as i32
}

/// What the child process of the test below does: queries whose functions panic (sync,
/// vectorized, async), then a panic outside any function.
fn panic_probe() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let session = Session::new();
        session.register(fragile).unwrap();
        session.register(ratio).unwrap();
        session.register(fragile_later).unwrap();
        for sql in [
            "SELECT fragile(s) FROM (VALUES ('ok'), ('boom')) AS t(s)",
            "SELECT ratio(a, b) FROM (VALUES (1, 1), (1, 0)) AS t(a, b)",
            "SELECT fragile_later(s) FROM (VALUES ('ok'), ('boom')) AS t(s)",
        ] {
            println!("query error: {}", error(&session, sql).await);
        }
    });
    let outside = std::thread::spawn(|| panic!("a panic outside user code"));
    assert!(outside.join().is_err());
}

#[test]
fn a_panic_in_a_function_is_reported_once_through_the_query_error() {
    if std::env::var_os("UDF_PANIC_PROBE").is_some() {
        panic_probe();
        return;
    }
    let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "scalar::errors::a_panic_in_a_function_is_reported_once_through_the_query_error",
            "--nocapture",
        ])
        .env("UDF_PANIC_PROBE", "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the probe runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for message in [
        "cannot handle `boom`",
        "attempt to divide by zero",
        "cannot await `boom`",
    ] {
        assert_eq!(stdout.matches(message).count(), 1, "{message} in\n{stdout}");
        assert!(
            !stderr.contains(message),
            "{message} printed by the panic hook:\n{stderr}"
        );
    }
    // The process's hook still reports what happens outside functions: the one panic (and
    // backtrace) printed.
    assert_eq!(stderr.matches("panicked at").count(), 1, "{stderr}");
    assert_eq!(stderr.matches("stack backtrace").count(), 1, "{stderr}");
    assert!(stderr.contains("a panic outside user code"), "{stderr}");
}

#[tokio::test]
async fn a_call_of_no_signature_is_one_planning_error() {
    let session = Session::new();
    session.register(substring).unwrap();
    let message = error(&session, "SELECT SubstringFunction(1, 2, 3)").await;
    assert!(
        message.starts_with("Error during planning: Invalid function call:\nsubstringfunction(INT, INT, INT)\nExpected signatures are:\nsubstringfunction(s STRING NOT NULL, begin INT NOT NULL, end INT NOT NULL) -> STRING NOT NULL"),
        "{message}"
    );
    // Not wrapped again by the engine's coercion.
    assert_eq!(
        message.matches("Error during planning").count(),
        1,
        "{message}"
    );
    assert!(!message.contains("Execution error"), "{message}");
}
