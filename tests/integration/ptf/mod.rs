//! Process table functions (rules 18–24 of docs/semantics.md): the PTF call syntax, row and set
//! semantics, typed keyed state, the DataFrame API and plans.

mod dataframe;
mod disk;
mod errors;
mod event_time;
mod examples;
mod harness;
mod order_by;
mod plans;
mod processors;
mod several_tables;
mod soak;
mod sql;
mod state;
mod timers;
mod unbounded;

use udf_runtime::Session;

use crate::support::{Column, column, session_with_partitions, strs};

/// `events(user, event)`: user a has three events, b one, in this order.
pub fn events() -> Vec<Column> {
    vec![
        column(
            "user",
            "STRING",
            strs(&[Some("a"), Some("b"), Some("a"), Some("a")]),
        ),
        column(
            "event",
            "STRING",
            strs(&[Some("x"), Some("y"), Some("z"), Some("w")]),
        ),
    ]
}

/// A session with one processor, so output follows the input order (rule 32 of docs/semantics.md).
pub fn one_processor(table: &str, columns: &[Column]) -> Session {
    session_with_partitions(table, columns, 1)
}

/// `events(k, ts)`: two keys with event times.
pub fn timers_table() -> Vec<Column> {
    vec![
        column("k", "STRING", strs(&[Some("a"), Some("b")])),
        column(
            "ts",
            "TIMESTAMP_LTZ(3)",
            [1000, 2000]
                .map(|ms| {
                    udf_core::Value::TimestampLtz(
                        chrono::DateTime::from_timestamp_millis(ms).expect("in range"),
                    )
                })
                .to_vec(),
        ),
    ]
}
