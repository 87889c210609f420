//! The PTF examples of the `ProcessTableFunction` documentation, run in SQL.

use udf_core::Value;
use udf_examples::ptf::concat_non_keys::concat_non_keys_function;
use udf_examples::ptf::counting::{
    counting_function, efficient_second_event_function, row_counting_function,
    second_event_function,
};
use udf_examples::ptf::history::history_function;
use udf_examples::ptf::my_ptf::{my_polymorphic_ptf, my_structured_ptf, my_typed_ptf};
use udf_examples::ptf::scalar_arguments::{
    addition_function, decimal_duplicator_function, duplicator_function,
};
use udf_examples::ptf::threshold::threshold_function;

use super::{events, one_processor};
use crate::row;
use crate::support::{column, column_names, rows, session_with};

crate::on_both_backends! {
    async fn counting_function_counts_rows_per_key() {
        let session = one_processor("events", &events());
        session.register(counting_function).unwrap();
        let sql = "SELECT * FROM CountingFunction(input => TABLE events PARTITION BY \"user\")";
        assert_eq!(
            column_names(&session, sql).await,
            ["user", "EXPR$0"],
            "keys, then the implicit column of a scalar output"
        );
        assert_eq!(
            rows(&session, sql).await,
            vec![
                row!["a", "Seen rows: 1"],
                row!["b", "Seen rows: 1"],
                row!["a", "Seen rows: 2"],
                row!["a", "Seen rows: 3"],
            ]
        );
    }
}

crate::on_both_backends! {
    async fn row_state_starts_as_nulls_and_counts() {
        let session = one_processor("events", &events());
        session.register(row_counting_function).unwrap();
        let sql = "SELECT * FROM RowCountingFunction(input => TABLE events PARTITION BY \"user\")";
        let counts: Vec<Value> = rows(&session, sql)
            .await
            .into_iter()
            .map(|r| r[1].clone())
            .collect();
        assert_eq!(
            counts,
            row![
                "Seen rows: 1",
                "Seen rows: 1",
                "Seen rows: 2",
                "Seen rows: 3"
            ]
        );
    }
}

crate::on_both_backends! {
    async fn second_event_function_pairs_the_first_event_with_each_later_one() {
        let session = one_processor("events", &events());
        session.register(second_event_function).unwrap();
        let sql = "SELECT * FROM SecondEventFunction(input => TABLE events PARTITION BY \"user\")";
        assert_eq!(
            rows(&session, sql).await,
            vec![
                row!["a", "Event 1: +I[a, x] and Event 2: +I[a, z]"],
                row!["a", "Event 1: +I[a, x] and Event 2: +I[a, w]"],
            ]
        );
    }
}

crate::on_both_backends! {
    async fn efficient_second_event_function_starts_over_after_clearing() {
        let session = one_processor("events", &events());
        session.register(efficient_second_event_function).unwrap();
        let sql =
            "SELECT * FROM EfficientSecondEventFunction(input => TABLE events PARTITION BY \"user\")";
        // After x and z pair up the state is cleared, so w is a first event again.
        assert_eq!(
            rows(&session, sql).await,
            vec![row!["a", "Event 1: +I[a, x] and Event 2: +I[a, z]"]]
        );
    }
}

crate::on_both_backends! {
    async fn threshold_function_keeps_amounts_at_or_above_the_threshold() {
        let table = vec![
            column(
                "k",
                "STRING",
                crate::support::strs(&[Some("a"), Some("b"), Some("a")]),
            ),
            column(
                "amount",
                "INT",
                vec![Value::Int(3), Value::Int(7), Value::Int(5)],
            ),
        ];
        let session = one_processor("orders", &table);
        session.register(threshold_function).unwrap();
        let named = rows(
            &session,
            "SELECT * FROM ThresholdFunction(input_table => TABLE orders PARTITION BY k, threshold => 5)",
        )
        .await;
        assert_eq!(named, vec![row!["b", 7], row!["a", 5]]);
        let positional = rows(
            &session,
            "SELECT * FROM ThresholdFunction(TABLE orders PARTITION BY k, 5)",
        )
        .await;
        assert_eq!(positional, named);
    }
}

crate::on_both_backends! {
    async fn concat_non_keys_function_skips_the_partition_columns() {
        let table = vec![
            column("a", "STRING", crate::support::strs(&[Some("x"), Some("y")])),
            column("k", "INT", vec![Value::Int(1), Value::Int(2)]),
            column("b", "BIGINT", vec![Value::BigInt(10), Value::BigInt(20)]),
        ];
        let session = one_processor("t", &table);
        session.register(concat_non_keys_function).unwrap();
        let sql = "SELECT * FROM ConcatNonKeysFunction(inputTable => TABLE t PARTITION BY k)";
        assert_eq!(
            rows(&session, sql).await,
            vec![row![1, "x, 10"], row![2, "y, 20"]]
        );
    }
}

crate::on_both_backends! {
    async fn history_function_reports_events_seen_more_than_a_thousand_times() {
        let mut users = Vec::new();
        let mut ids = Vec::new();
        for i in 0..1003 {
            users.push(Some("u1"));
            ids.push(Some("login"));
            if i % 2 == 0 {
                users.push(Some("u2"));
                ids.push(Some("login"));
            }
        }
        let table = vec![
            column("user", "STRING", crate::support::strs(&users)),
            column("eventId", "STRING", crate::support::strs(&ids)),
        ];
        let session = session_with("history", &table);
        session.register(history_function).unwrap();
        let sql = "SELECT * FROM HistoryFunction(input => TABLE history PARTITION BY \"user\")";
        // The 1002nd and 1003rd logins of u1 find a count above 1000; u2 has 502.
        assert_eq!(
            rows(&session, sql).await,
            vec![
                row!["u1", "Anomaly detected: login"],
                row!["u1", "Anomaly detected: login"],
            ]
        );
    }
}

crate::on_both_backends! {
    async fn my_ptf_reads_typed_structured_and_polymorphic_rows() {
        let table = vec![
            column("name", "STRING", crate::support::strs(&[Some("Bob")])),
            column("s", "STRING", crate::support::strs(&[Some("hi")])),
            column("age", "BIGINT", vec![Value::BigInt(42)]),
        ];
        let session = one_processor("people", &table);
        session.register(my_typed_ptf).unwrap();
        session.register(my_structured_ptf).unwrap();
        session.register(my_polymorphic_ptf).unwrap();

        let typed = rows(
            &session,
            "SELECT * FROM MyTypedPTF(TABLE people PARTITION BY name)",
        )
        .await;
        assert_eq!(typed, vec![row!["Bob", "ROW<s STRING> NOT NULL (hi)"]]);

        // `age` is BIGINT in the table and INT in the struct: it is cast by name.
        let structured = rows(
            &session,
            "SELECT * FROM MyStructuredPTF(TABLE people PARTITION BY name)",
        )
        .await;
        assert_eq!(
            structured,
            vec![row![
                "Bob",
                "ROW<name STRING NOT NULL, age INT> NOT NULL Bob is 42"
            ]]
        );

        let polymorphic = rows(
            &session,
            "SELECT * FROM MyPolymorphicPTF(TABLE people PARTITION BY name)",
        )
        .await;
        assert_eq!(
            polymorphic,
            vec![row![
                "Bob",
                "ROW<name STRING, s STRING, age BIGINT> NOT NULL (Bob, hi, 42)"
            ]]
        );
    }
}

crate::on_both_backends! {
    async fn ptfs_with_only_scalar_arguments_run_once() {
        let session = session_with("unused", &events());
        session.register(addition_function).unwrap();
        session.register(duplicator_function).unwrap();
        session.register(decimal_duplicator_function).unwrap();

        let sql = "SELECT * FROM AdditionFunction(1, 2)";
        assert_eq!(column_names(&session, sql).await, ["EXPR$0"]);
        assert_eq!(rows(&session, sql).await, vec![row![3]]);

        let sql = "SELECT * FROM DuplicatorFunction(s => 'x', i => 7)";
        assert_eq!(column_names(&session, sql).await, ["i", "s"]);
        assert_eq!(rows(&session, sql).await, vec![row![7, "x"], row![7, "x"]]);

        let sql =
            "SELECT CAST(d AS STRING) FROM DecimalDuplicatorFunction(CAST(1.5 AS DECIMAL(10, 4)))";
        assert_eq!(
            rows(&session, sql).await,
            vec![row!["1.5000"], row!["1.5000"]]
        );
    }
}
