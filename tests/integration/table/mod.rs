//! Table functions (rules 11–13 of docs/semantics.md): LATERAL joins in SQL and the DataFrame API.

mod batches;
mod errors;
mod examples;
mod lateral;
mod plans;

use udf_core::Value;
use udf_runtime::Session;
use udf_runtime::datafusion::prelude::DataFrame;

use crate::support::{Column, batches_to_rows, column, session_with, strs};

/// `MyTable(id, myField)`: words separated by single and double spaces, an empty string
/// and a NULL.
pub fn my_table() -> Vec<Column> {
    vec![
        column("id", "INT", (1..=4).map(Value::Int).collect()),
        column(
            "myField",
            "STRING",
            strs(&[Some("Hello World"), Some("a b  c"), Some(""), None]),
        ),
    ]
}

pub fn my_session() -> Session {
    session_with("MyTable", &my_table())
}

pub async fn collect(df: DataFrame) -> Vec<Vec<Value>> {
    batches_to_rows(&df.collect().await.unwrap())
}

/// A row of values: integers as INT, text as STRING, `None` as NULL.
#[macro_export]
macro_rules! row {
    ($($value:expr),* $(,)?) => {
        vec![$(::udf_core::Value::from($value)),*]
    };
}
