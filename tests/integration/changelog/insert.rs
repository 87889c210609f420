//! `INSERT INTO` a table with an `op` column: a changelog writes its row kinds there, also
//! a GROUP BY over a stream, whose insert names its columns and leaves `op` out (rule 38 of
//! `docs/semantics.md`).

use udf_core::arrow::array::{AsArray, RecordBatch};
use udf_core::arrow::datatypes::UInt64Type;

use super::{Change, changelog_table, output_batches, rows_as_text, session};

const CHANGES: [Change; 5] = [
    ("+I", "a", Some(5)),
    ("+I", "a", Some(3)),
    ("-D", "a", Some(5)),
    ("+I", "b", Some(7)),
    ("-D", "b", Some(7)),
];

/// The row count an insert gives back.
fn count(batches: &[RecordBatch]) -> u64 {
    batches[0].column(0).as_primitive::<UInt64Type>().value(0)
}

async fn rows_of(session: &udf_runtime::Session, sql: &str) -> Vec<String> {
    let batches = session.sql(sql).await.unwrap().collect().await.unwrap();
    rows_as_text(&batches)
}

#[tokio::test]
async fn a_group_by_inserted_with_a_column_list_writes_its_row_kinds_into_op() {
    let session = session(1);
    let feed = changelog_table(&session);
    session
        .sql("CREATE TABLE out (k VARCHAR, n BIGINT, op VARCHAR)")
        .await
        .unwrap();
    let written = output_batches(
        &session,
        feed,
        "INSERT INTO out (k, n) SELECT k, COUNT(*) AS n FROM t GROUP BY k",
        &CHANGES,
        true,
        2,
    )
    .await;
    assert_eq!(count(&written), 7);
    assert_eq!(
        rows_of(&session, "SELECT k, n, op FROM out").await,
        [
            "a 1 +I", "a 1 -U", "a 2 +U", "a 2 -U", "a 1 +U", "b 1 +I", "b 1 -D"
        ]
    );
}

/// The column left out of an insert-only query stays NULL, as SQL says.
#[tokio::test]
async fn an_insert_only_query_leaves_op_null() {
    let session = session(1);
    session
        .sql("CREATE TABLE out (k VARCHAR, n BIGINT, op VARCHAR)")
        .await
        .unwrap();
    let written = session
        .sql("INSERT INTO out (k, n) VALUES ('a', 1), ('b', 2)")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(count(&written), 2);
    assert_eq!(
        rows_of(&session, "SELECT k, n, op FROM out ORDER BY k").await,
        ["a 1 NULL", "b 2 NULL"]
    );
}
