//! Rule 3: a call resolves to the single best signature; otherwise planning fails listing the
//! call's argument types and every candidate.

use udf_core::Value;
use udf_examples::scalar::sum::SumFunction;
use udf_runtime::Session;

use crate::support::{error, rows};

fn session() -> Session {
    let session = Session::new();
    session.register(SumFunction).unwrap();
    session
}

#[tokio::test]
async fn each_call_picks_the_best_signature() {
    let session = session();
    let result = rows(
        &session,
        "SELECT SumFunction(1, 2) AS ints, SumFunction('3', ' 4') AS strings, SumFunction(1.5, 2.25, 3.5) AS doubles, \
                SumFunction(CAST(1 AS BIGINT), CAST(2 AS BIGINT)) AS bigints",
    )
    .await;
    // Integer literals are INT as in Flink; BIGINT does not narrow to INT, so the last call
    // widens to the DOUBLE varargs signature.
    assert_eq!(
        result,
        vec![vec![
            Value::Int(3),
            Value::Int(7),
            Value::Int(7),
            Value::Int(3)
        ]]
    );
}

#[tokio::test]
async fn an_unmatched_call_lists_argument_types_and_candidates() {
    let session = session();
    let message = error(&session, "SELECT SumFunction(true, 'x')").await;
    assert!(
        message.contains(
            "Invalid function call:\nsumfunction(BOOLEAN, STRING)\nExpected signatures are:\n\
             sumfunction(a INT NOT NULL, b INT NOT NULL) -> INT NOT NULL\n\
             sumfunction(a STRING NOT NULL, b STRING NOT NULL) -> INT NOT NULL\n\
             sumfunction(d DOUBLE NOT NULL...) -> INT NOT NULL"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn an_error_in_one_overload_names_the_function_and_row() {
    let session = session();
    let message = error(
        &session,
        "SELECT SumFunction(s, '1') FROM (VALUES ('1'), ('x')) AS t(s)",
    )
    .await;
    assert!(
        message.contains("function `sumfunction` failed"),
        "{message}"
    );
    assert!(
        message.contains("row 1 of the batch, arguments: a => 'x', b => '1'"),
        "{message}"
    );
}
