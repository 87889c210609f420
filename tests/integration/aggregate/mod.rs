//! Aggregate functions: rules 14–16 of docs/semantics.md, capabilities, seed examples.

mod capabilities;
mod distinct;
mod errors;
mod examples;
mod grouping;
mod reset;
mod windows;

use udf_core::Value;

use crate::support::{Column, column, strs};

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
