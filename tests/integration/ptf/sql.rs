//! The PTF call syntax: named and positional arguments, `PARTITION BY (a, b)`,
//! `TABLE (SELECT ...)`, `uid`, `optional_partition_by`, pass-through columns, renaming.

use udf_core::Value;
use udf_core::prelude::*;
use udf_examples::ptf::conformance::counter;

use super::{events, one_processor};
use crate::row;
use crate::support::{column, column_names, rows, strs};

fn keyed() -> Vec<crate::support::Column> {
    vec![
        column(
            "a",
            "STRING",
            strs(&[Some("x"), Some("x"), Some("y"), Some("x")]),
        ),
        column(
            "b",
            "INT",
            vec![Value::Int(1), Value::Int(2), Value::Int(1), Value::Int(1)],
        ),
        column(
            "v",
            "INT",
            vec![
                Value::Int(10),
                Value::Int(20),
                Value::Int(30),
                Value::Int(40),
            ],
        ),
    ]
}

crate::on_both_backends! {
    async fn composite_keys_subqueries_and_uid() {
        let session = one_processor("t", &keyed());
        session.register(counter).unwrap();
        let sql = "SELECT * FROM Counter(input => TABLE t PARTITION BY (a, b), uid => 'counter-1')";
        assert_eq!(column_names(&session, sql).await, ["a", "b", "cnt"]);
        assert_eq!(
            rows(&session, sql).await,
            vec![
                row!["x", 1, 1_i64],
                row!["x", 2, 1_i64],
                row!["y", 1, 1_i64],
                row!["x", 1, 2_i64]
            ]
        );
        let sql = "SELECT * FROM Counter(TABLE (SELECT a, v FROM t WHERE v > 10) PARTITION BY a)";
        assert_eq!(
            rows(&session, sql).await,
            vec![row!["x", 1_i64], row!["y", 1_i64], row!["x", 2_i64]]
        );
    }
}

crate::on_both_backends! {
    async fn output_columns_can_be_renamed_and_filtered_above_the_call() {
        let session = one_processor("t", &keyed());
        session.register(counter).unwrap();
        // The filter on the count is applied to the function's output: every row was counted.
        let sql = "SELECT c.key, c.n FROM Counter(input => TABLE t PARTITION BY a) AS c(key, n) WHERE c.n > 1";
        assert_eq!(
            rows(&session, sql).await,
            vec![row!["x", 2_i64], row!["x", 3_i64]]
        );
    }
}

/// Counts all rows, with or without PARTITION BY.
#[ptf(name = "CountAll")]
fn count_all(
    #[state] seen: &mut i64,
    #[argument(set_semantic_table, optional_partition_by)] input: Row,
    out: &mut Collector<i64>,
) {
    let _ = input;
    *seen += 1;
    out.collect(*seen);
}

crate::on_both_backends! {
    async fn optional_partition_by_gives_one_processor_for_everything() {
        // Two target partitions: without PARTITION BY, one processor still sees all rows.
        let session = crate::support::session_with("events", &events());
        session.register(count_all).unwrap();
        let counts = rows(&session, "SELECT * FROM CountAll(input => TABLE events)").await;
        assert_eq!(
            counts,
            vec![row![1_i64], row![2_i64], row![3_i64], row![4_i64]]
        );
        let keyed = rows(
            &session,
            "SELECT * FROM CountAll(input => TABLE events PARTITION BY \"user\") ORDER BY \"user\", \"EXPR$0\"",
        )
        .await;
        assert_eq!(
            keyed,
            vec![
                row!["a", 1_i64],
                row!["a", 2_i64],
                row!["a", 3_i64],
                row!["b", 1_i64]
            ]
        );
    }
}

/// Upper-cases `event`, passing every input column through.
#[ptf(name = "Shout")]
fn shout(
    #[argument(row_semantic_table, pass_columns_through)] input: Row,
    out: &mut Collector<String>,
) {
    if let Some(event) = input.field("event").and_then(Value::as_str) {
        out.collect(event.to_uppercase());
    }
}

crate::on_both_backends! {
    async fn pass_through_columns_come_first() {
        let session = one_processor("events", &events());
        session.register(shout).unwrap();
        let sql = "SELECT * FROM Shout(TABLE events)";
        assert_eq!(
            column_names(&session, sql).await,
            ["user", "event", "EXPR$0"]
        );
        assert_eq!(
            rows(&session, sql).await,
            vec![
                row!["a", "x", "X"],
                row!["b", "y", "Y"],
                row!["a", "z", "Z"],
                row!["a", "w", "W"]
            ]
        );
    }
}

/// Emits its key twice: output names repeat, so Flink's rule renames the second `user`.
#[ptf(name = "EchoKey")]
#[data_type("ROW<user STRING>")]
fn echo_key(#[argument(set_semantic_table)] input: Row, out: &mut Collector<Row>) {
    out.collect(Row::of([input.get(0).cloned().unwrap_or(Value::Null)]));
}

crate::on_both_backends! {
    async fn repeated_output_names_get_a_counter() {
        let session = one_processor("events", &events());
        session.register(echo_key).unwrap();
        let sql = "SELECT * FROM EchoKey(input => TABLE events PARTITION BY \"user\")";
        assert_eq!(column_names(&session, sql).await, ["user", "user0"]);
    }
}

crate::on_both_backends! {
    async fn ordinary_sql_still_parses_as_before() {
        let session = one_processor("events", &events());
        let sql = "SELECT \"user\", COUNT(*) AS n FROM events GROUP BY \"user\" ORDER BY \"user\"";
        assert_eq!(
            rows(&session, sql).await,
            vec![row!["a", 3_i64], row!["b", 1_i64]]
        );
        // PARTITION BY in a window is the engine's, not a table argument.
        let sql = "SELECT event, CAST(ROW_NUMBER() OVER (PARTITION BY \"user\" ORDER BY event) AS INT) AS n \
                   FROM events ORDER BY event";
        assert_eq!(
            rows(&session, sql).await,
            vec![row!["w", 1], row!["x", 2], row!["y", 1], row!["z", 3]]
        );
    }
}
