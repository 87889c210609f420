//! Mistakes in calls of table functions, and failures inside them, are reported with the
//! function, the row and its arguments.

use udf_core::prelude::*;
use udf_examples::scalar::sum::SumFunction;
use udf_examples::table::split::split_function;

use super::my_session;
use crate::support::error;

/// Fails for "a b  c", panics for "".
#[table_function]
fn picky(s: &str, out: &mut Collector<String>) -> Result<()> {
    if s.contains("  ") {
        bail!("two spaces in a row");
    }
    if s.is_empty() {
        panic!("nothing to split");
    }
    out.collect(s.to_owned());
    Ok(())
}

#[tokio::test]
async fn failures_name_the_function_the_row_and_the_arguments() {
    let session = my_session();
    session.register(picky).unwrap();
    let failed = error(
        &session,
        "SELECT f0 FROM MyTable, LATERAL TABLE(picky(\"myField\"))",
    )
    .await;
    assert!(
        failed.contains(
            "table function `picky` failed: two spaces in a row (row 1 of the batch, arguments: s => 'a b  c')"
        ),
        "{failed}"
    );
    let panicked = error(
        &session,
        "SELECT f0 FROM MyTable, LATERAL TABLE(picky(\"myField\")) WHERE id = 3",
    )
    .await;
    assert!(
        panicked.contains("table function `picky` panicked: nothing to split")
            && panicked.contains("arguments: s => ''"),
        "{panicked}"
    );
}

#[tokio::test]
async fn calls_in_the_wrong_place() {
    let session = my_session();
    session.register(split_function).unwrap();
    session.register(SumFunction).unwrap();
    let cases = [
        (
            "SELECT SplitFunction(\"myField\") FROM MyTable",
            "`splitfunction` is a table function, which yields rows rather than a value: call it in FROM",
        ),
        (
            "SELECT id FROM MyTable LEFT JOIN LATERAL TABLE(SplitFunction(\"myField\")) ON length > 1",
            "LEFT JOIN LATERAL TABLE(splitfunction(...)) takes the condition ON TRUE",
        ),
        (
            "SELECT * FROM TABLE(SumFunction(1, 2))",
            "`sumfunction` is a scalar function; TABLE(...) calls table functions",
        ),
        (
            "SELECT * FROM MyTable, LATERAL TABLE(nosuch(id))",
            "no table function named `nosuch` is registered",
        ),
        (
            "SELECT * FROM MyTable, LATERAL TABLE(SplitFunction(id))",
            "splitfunction(INT)\nExpected signatures are:\nsplitfunction(s STRING NOT NULL)",
        ),
        (
            "SELECT * FROM MyTable, LATERAL TABLE(SplitFunction(\"myField\")) AS T(only_one)",
            "2 columns",
        ),
    ];
    for (sql, expected) in cases {
        let message = error(&session, sql).await;
        assert!(message.contains(expected), "{sql}\n{message}");
    }
}
