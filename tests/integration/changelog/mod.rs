//! Changelogs: rows with kinds (`+I`, `-U`, `+U`, `-D`) fed in, the updating GROUP BY over
//! streams and changelogs, what may read a changelog, and a changelog applied to a table.

mod debezium;
mod errors;
mod group_by;
mod insert;
mod materialize;
mod on_disk;

use std::sync::Arc;

use futures::StreamExt;
use udf_core::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use udf_core::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use udf_runtime::{Feed, Session, changelog};

use crate::support::{self, session_of};

/// `t(k STRING, v BIGINT)`.
fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("k", DataType::Utf8, true),
        Field::new("v", DataType::Int64, true),
    ]))
}

/// Rows of `t` with their kinds: `("+I", "a", Some(5))`.
type Change = (&'static str, &'static str, Option<i64>);

/// The rows as one batch of `t`, with the row-kind column when `kinds`.
fn batch_of(rows: &[Change], kinds: bool) -> RecordBatch {
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
        Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.2))),
    ];
    let schema = if kinds {
        columns.push(Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.0),
        )));
        Arc::new(changelog::with_row_kind(&schema()))
    } else {
        schema()
    };
    RecordBatch::try_new(schema, columns).unwrap()
}

/// Registers `t` as a changelog feed.
fn changelog_table(session: &Session) -> Feed {
    session.register_changelog_feed("t", schema()).unwrap()
}

/// Runs `sql` while `rows` are fed to `feed`, `rows_per_batch` at a time; the output rows,
/// each as its values (the row kind where the output has it) separated by spaces.
async fn fed_output(
    session: &Session,
    feed: Feed,
    sql: &str,
    rows: &[Change],
    kinds: bool,
    rows_per_batch: usize,
) -> Vec<String> {
    let batches = output_batches(session, feed, sql, rows, kinds, rows_per_batch).await;
    rows_as_text(&batches)
}

/// Each row as its values separated by spaces.
fn rows_as_text(batches: &[RecordBatch]) -> Vec<String> {
    support::batches_to_rows(batches)
        .iter()
        .map(|row| {
            let values: Vec<String> = row.iter().map(ToString::to_string).collect();
            values.join(" ")
        })
        .collect()
}

async fn output_batches(
    session: &Session,
    feed: Feed,
    sql: &str,
    rows: &[Change],
    kinds: bool,
    rows_per_batch: usize,
) -> Vec<RecordBatch> {
    let whole = batch_of(rows, kinds);
    let mut output = session
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}\n{e}"))
        .execute_stream()
        .await
        .unwrap_or_else(|e| panic!("{sql}\n{e}"));
    let sender = tokio::spawn(async move {
        let mut start = 0;
        while start < whole.num_rows() {
            let len = rows_per_batch.min(whole.num_rows() - start);
            feed.send(whole.slice(start, len)).await.unwrap();
            start += len;
        }
    });
    let mut batches = Vec::new();
    while let Some(batch) = output.next().await {
        batches.push(batch.unwrap_or_else(|e| panic!("{sql}\n{e}")));
    }
    sender.await.unwrap();
    batches
}

/// A session of `partitions` target partitions.
fn session(partitions: usize) -> Session {
    session_of(partitions)
}
