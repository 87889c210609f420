//! Aggregate functions: rules 14–16 of docs/semantics.md, capabilities, seed examples.

mod capabilities;
mod distinct;
mod errors;
mod examples;
mod grouping;
mod reset;
mod windows;

use std::sync::Arc;

use udf_core::Value;
use udf_runtime::Session;
use udf_runtime::datafusion::datasource::MemTable;
use udf_runtime::datafusion::prelude::{SessionConfig, col};

use crate::support::{Column, batch, column, strs};

/// A one-partition session with `sorted(k, v)` declared sorted by `k`, in three batches of
/// three rows: `keys` must be sorted and, like `values`, nine long.
pub fn sorted_session(keys: [i64; 9], values: [Value; 9]) -> Session {
    let whole = batch(&[
        column("k", "BIGINT", keys.map(Value::BigInt).to_vec()),
        column("v", "BIGINT", values.to_vec()),
    ]);
    let batches = vec![whole.slice(0, 3), whole.slice(3, 3), whole.slice(6, 3)];
    let table = MemTable::try_new(whole.schema(), vec![batches])
        .unwrap()
        .with_sort_order(vec![vec![col("k").sort(true, false)]]);
    let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
    session.register_table("sorted", Arc::new(table)).unwrap();
    session
}

/// `sales(category, price, quantity)`: eight rows, two categories, one NULL price.
pub fn sales() -> Vec<Column> {
    let doubles = |v: &[Option<f64>]| {
        v.iter()
            .map(|x| x.map_or(Value::Null, Value::Double))
            .collect()
    };
    vec![
        column(
            "category",
            "STRING",
            strs(&[
                Some("tea"),
                Some("coffee"),
                Some("tea"),
                Some("coffee"),
                Some("tea"),
                Some("coffee"),
                Some("tea"),
                Some("coffee"),
            ]),
        ),
        column(
            "price",
            "DOUBLE",
            doubles(&[
                Some(2.0),
                Some(3.0),
                Some(4.0),
                None,
                Some(6.0),
                Some(5.0),
                Some(1.0),
                Some(1.0),
            ]),
        ),
        column(
            "quantity",
            "DOUBLE",
            doubles(&[
                Some(1.0),
                Some(2.0),
                Some(1.0),
                Some(5.0),
                Some(2.0),
                Some(2.0),
                Some(4.0),
                Some(4.0),
            ]),
        ),
    ]
}
