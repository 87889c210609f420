//! The test harness for users' PTFs (`udf_runtime::PtfHarness`): the seed's TimerFunction
//! driven without SQL — rows in, the watermark moved by hand, output, fired timers and state
//! per key checked after each step — and a two-table function fed table by table.

use std::sync::Arc;

use udf_core::Value;
use udf_core::arrow::array::{ArrayRef, RecordBatch, StringArray, TimestampMillisecondArray};
use udf_core::arrow::datatypes::{DataType as ArrowType, Field, Schema, SchemaRef, TimeUnit};
use udf_examples::ptf::conformance::counter;
use udf_examples::ptf::timer::{SeenState, TimerFunction};
use udf_runtime::datafusion::common::ScalarValue;
use udf_runtime::{FiredTimer, PtfHarness};

use crate::row;
use crate::support::harness_on_test_backend;

/// `(k STRING, ts TIMESTAMP(3))`.
pub(super) fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("k", ArrowType::Utf8, false),
        Field::new(
            "ts",
            ArrowType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
    ]))
}

/// Rows `(key, ts ms)`.
pub(super) fn rows(events: &[(&str, i64)]) -> RecordBatch {
    let keys: ArrayRef = Arc::new(StringArray::from_iter_values(events.iter().map(|e| e.0)));
    let times: ArrayRef = Arc::new(TimestampMillisecondArray::from_iter_values(
        events.iter().map(|e| e.1),
    ));
    RecordBatch::try_new(schema(), vec![keys, times]).unwrap()
}

/// A `TIMESTAMP(3)` value at `ms`.
fn at(ms: i64) -> Value {
    Value::Timestamp(
        chrono::DateTime::from_timestamp_millis(ms)
            .expect("in range")
            .naive_utc(),
    )
}

fn key(k: &str) -> Vec<ScalarValue> {
    vec![ScalarValue::from(k)]
}

/// The seed's TimerFunction, partitioned by `k`, on time `ts`.
async fn timer_function() -> PtfHarness {
    harness_on_test_backend(PtfHarness::builder(TimerFunction, schema()))
        .partition_by(["k"])
        .on_time("ts")
        .build()
        .await
        .unwrap()
}

crate::on_both_backends! {
    async fn the_timer_function_step_by_step() {
        let mut harness = timer_function().await;

        // a's and b's first events: remembered, each with a timeout 60 s later.
        harness.push(rows(&[("a", 1_000), ("b", 10_000)])).unwrap();
        assert!(harness.take_rows().unwrap().is_empty());
        assert_eq!(
            harness
                .value_state::<SeenState>("memory", &key("a"))
                .unwrap(),
            Some(SeenState {
                seen: Some("a".into())
            })
        );
        assert_eq!(harness.timers_pending(), 2);

        // a's second event within the minute: its message, and its state and timer go.
        harness.push(rows(&[("a", 30_000)])).unwrap();
        // Each row: the key, the message and `rowtime` (the emitting row's time).
        assert_eq!(
            harness.take_rows().unwrap(),
            vec![row!["a", "Second event arrived for: a", at(30_000)]]
        );
        assert_eq!(
            harness
                .value_state::<SeenState>("memory", &key("a"))
                .unwrap(),
            None
        );
        assert_eq!(harness.timers_pending(), 1);

        // The watermark reaches b's timeout: it fires, with b's key and the timer's time.
        harness.advance_watermark(69_999).unwrap();
        assert!(harness.take_fired_timers().unwrap().is_empty());
        harness.advance_watermark(70_000).unwrap();
        assert_eq!(
            harness.take_fired_timers().unwrap(),
            vec![FiredTimer {
                key: vec![Value::String("b".into())],
                name: Some("timeout".into()),
                time: 70_000,
            }]
        );
        // A timer's row carries the timer's time as `rowtime`.
        assert_eq!(
            harness.take_rows().unwrap(),
            vec![row!["b", "Timeout for: b", at(70_000)]]
        );

        // c's first event, then the end of input: its timer fires once.
        harness.push(rows(&[("c", 80_000)])).unwrap();
        harness.end_input().unwrap();
        let fired = harness.take_fired_timers().unwrap();
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].time, 140_000);
        assert_eq!(
            harness.take_rows().unwrap(),
            vec![row!["c", "Timeout for: c", at(140_000)]]
        );
        let error = harness.push(rows(&[("d", 1)])).unwrap_err().to_string();
        assert!(error.contains("the harness input has ended"), "{error}");
    }
}

crate::on_both_backends! {
    async fn misuse_is_an_error() {
        let mut harness = timer_function().await;
        harness.advance_watermark(10).unwrap();
        let back = harness.advance_watermark(5).unwrap_err().to_string();
        assert!(back.contains("the watermark moves forward only"), "{back}");
        let other = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("x", ArrowType::Utf8, false)])),
            vec![Arc::new(StringArray::from(vec!["a"])) as ArrayRef],
        )
        .unwrap();
        let wrong = harness.push(other).unwrap_err().to_string();
        assert!(
            wrong.contains("are not those of the harness table `input`"),
            "{wrong}"
        );

        // A set-semantics function without PARTITION BY fails as its SQL call would.
        let unpartitioned = harness_on_test_backend(PtfHarness::builder(counter, schema()))
            .build()
            .await;
        let message = unpartitioned.err().expect("a planning error").to_string();
        assert!(
            message.contains("has set semantics: pass it with PARTITION BY"),
            "{message}"
        );

        // No watermark without an `on_time` column.
        let mut untimed = harness_on_test_backend(PtfHarness::builder(counter, schema()))
            .partition_by(["k"])
            .build()
            .await
            .unwrap();
        untimed.push(rows(&[("a", 0), ("a", 1), ("b", 2)])).unwrap();
        let counts: Vec<Value> = untimed
            .take_rows()
            .unwrap()
            .into_iter()
            .map(|r| r[1].clone())
            .collect();
        assert_eq!(counts, row![1_i64, 2_i64, 1_i64]);
        let none = untimed.advance_watermark(1).unwrap_err().to_string();
        assert!(none.contains("no `on_time` column"), "{none}");
    }
}

crate::on_both_backends! {
    async fn scalar_arguments_and_a_named_table_argument() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", ArrowType::Utf8, false),
            Field::new("amount", ArrowType::Int32, false),
        ]));
        let mut harness = harness_on_test_backend(PtfHarness::builder(
            udf_examples::ptf::threshold::threshold_function,
            schema.clone(),
        ))
        .table("input_table")
        .partition_by(["k"])
        .arg("threshold", 5_i32)
        .build()
        .await
        .unwrap();
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["a", "b", "a"])) as ArrayRef,
                Arc::new(udf_core::arrow::array::Int32Array::from(vec![4, 9, 5])),
            ],
        )
        .unwrap();
        harness.push(batch).unwrap();
        assert_eq!(
            harness.take_rows().unwrap(),
            vec![row!["b", 9], row!["a", 5]]
        );
    }
}

/// `(id BIGINT, amount BIGINT, ts TIMESTAMP(3))` with the key column named `key`.
fn money_schema(key: &str) -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(key, ArrowType::Int64, false),
        Field::new("amount", ArrowType::Int64, false),
        Field::new(
            "ts",
            ArrowType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
    ]))
}

/// Rows `(key, amount, ts ms)`.
fn money(key: &str, rows: &[(i64, i64, i64)]) -> RecordBatch {
    let column = |values: Vec<i64>| -> ArrayRef {
        Arc::new(udf_core::arrow::array::Int64Array::from(values))
    };
    RecordBatch::try_new(
        money_schema(key),
        vec![
            column(rows.iter().map(|r| r.0).collect()),
            column(rows.iter().map(|r| r.1).collect()),
            Arc::new(TimestampMillisecondArray::from_iter_values(
                rows.iter().map(|r| r.2),
            )),
        ],
    )
    .unwrap()
}

crate::on_both_backends! {
    async fn a_two_table_function_fed_table_by_table() {
        use udf_examples::ptf::payment_match::{PaymentMatch, Pending};
        let mut harness = harness_on_test_backend(PtfHarness::builder(PaymentMatch, money_schema("id")))
            .table("orders")
            .partition_by(["id"])
            .and_table("payments", money_schema("order_id"))
            .partition_by(["order_id"])
            .on_time("ts")
            .arg("timeout_seconds", 60_i64)
            .build()
            .await
            .unwrap();

        // Order 1 at 0 s, paid at 30 s: the payment's row emits, with both tables' key columns.
        harness
            .push_to("orders", money("id", &[(1, 100, 0)]))
            .unwrap();
        assert_eq!(
            harness
                .value_state::<Pending>("pending", &[ScalarValue::from(1_i64)])
                .unwrap(),
            Some(Pending {
                order: Some((100, 60_000)),
                early_payment: None,
            })
        );
        harness
            .push_to("payments", money("order_id", &[(1, 100, 30_000)]))
            .unwrap();
        assert_eq!(
            harness.take_rows().unwrap(),
            vec![row![1_i64, 1_i64, "paid 100 of 100", at(30_000)]]
        );
        assert_eq!(harness.keys_held(), 0, "clear_all() released the key");

        // Order 2 at 10 s is never paid: its timeout waits for the slower table's watermark.
        harness
            .push_to("orders", money("id", &[(2, 200, 10_000)]))
            .unwrap();
        harness.advance_table_watermark("orders", 100_000).unwrap();
        harness.advance_table_watermark("payments", 69_999).unwrap();
        assert!(harness.take_fired_timers().unwrap().is_empty());
        harness.advance_table_watermark("payments", 70_000).unwrap();
        assert_eq!(
            harness.take_fired_timers().unwrap(),
            vec![FiredTimer {
                key: vec![Value::from(2_i64)],
                name: Some("timeout".into()),
                time: 70_000,
            }]
        );
        assert_eq!(
            harness.take_rows().unwrap(),
            vec![row![2_i64, 2_i64, "unpaid 200", at(70_000)]]
        );

        let unnamed = harness
            .push(money("id", &[(3, 1, 0)]))
            .unwrap_err()
            .to_string();
        assert!(
            unnamed.contains(
                "the harness has 2 tables (orders, payments): push rows with `push_to(table, batch)`"
            ),
            "{unnamed}"
        );
        let unknown = harness
            .push_to("refunds", money("id", &[(3, 1, 0)]))
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("the harness has no table `refunds` (its tables: orders, payments)"),
            "{unknown}"
        );
    }
}
