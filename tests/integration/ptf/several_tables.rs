//! PTFs over several co-partitioned set-semantics tables (rule 34 of docs/semantics.md):
//! orders matched with payments within a timeout — rows of both tables interleaved, with one
//! and four processors; each table's watermark; the output prefix; EXPLAIN; the DataFrame
//! form; planning errors; Flink's own multi-input program.

use std::sync::Arc;
use std::time::Duration;

use udf_core::Semantics;
use udf_core::Value;
use udf_core::arrow::array::RecordBatch;
use udf_core::prelude::*;
use udf_examples::ptf::payment_match::PaymentMatch;
use udf_runtime::Session;
use udf_runtime::datafusion::datasource::MemTable;
use udf_runtime::prelude::*;

use crate::support::{
    Column, batch, batches_to_rows, column, column_names, error, explain, rows, session_of,
};

fn at(seconds: i64) -> Value {
    Value::TimestampLtz(chrono::DateTime::from_timestamp_millis(seconds * 1000).unwrap())
}

/// `(key, amount, ts)` rows as columns, the key column named `key`; times in seconds.
fn money(key: &str, rows: &[(i64, i64, i64)]) -> Vec<Column> {
    vec![
        column(
            key,
            "BIGINT",
            rows.iter().map(|r| Value::from(r.0)).collect(),
        ),
        column(
            "amount",
            "BIGINT",
            rows.iter().map(|r| Value::from(r.1)).collect(),
        ),
        column(
            "ts",
            "TIMESTAMP_LTZ(3)",
            rows.iter().map(|r| at(r.2)).collect(),
        ),
    ]
}

/// `orders(id, amount, ts)`, in time order.
fn orders() -> Vec<Column> {
    money(
        "id",
        &[
            (1, 100, 0),
            (2, 200, 10),
            (3, 300, 20),
            (4, 400, 30),
            (5, 500, 40),
            (6, 600, 100),
        ],
    )
}

/// `payments(order_id, amount, ts)`, in time order: order 4 is paid before it is placed, 2
/// too late, 5 exactly at its deadline, 7 has no order, 3 and 6 are never paid.
fn payments() -> Vec<Column> {
    money(
        "order_id",
        &[
            (4, 400, 5),
            (1, 100, 30),
            (7, 70, 50),
            (2, 150, 75),
            (5, 500, 100),
        ],
    )
}

/// `table` as `partitions` partitions (rows dealt round-robin, so each stays in time order).
fn register(session: &Session, table: &str, columns: &[Column], partitions: usize) {
    let whole = batch(columns);
    let mut parts: Vec<Vec<RecordBatch>> = vec![Vec::new(); partitions];
    for row in 0..whole.num_rows() {
        parts[row % partitions].push(whole.slice(row, 1));
    }
    let provider = MemTable::try_new(whole.schema(), parts).unwrap();
    session.register_table(table, Arc::new(provider)).unwrap();
    session.declare_watermark(table, "ts", Duration::ZERO);
}

/// Orders and payments (two partitions each) with `processors` processors.
fn session(processors: usize) -> Session {
    let session = session_of(processors);
    register(&session, "orders", &orders(), 2);
    register(&session, "payments", &payments(), 2);
    session.register(PaymentMatch).unwrap();
    session
}

const MATCH: &str = "SELECT * FROM PaymentMatch(
    orders => TABLE orders PARTITION BY id,
    payments => TABLE payments PARTITION BY order_id,
    timeout_seconds => 60,
    on_time => DESCRIPTOR(ts))";

/// The outcome per order id: (id, order_id, message, rowtime in seconds). A paid order's
/// message comes from whichever of its two rows reached the processor second, so its
/// `rowtime` is one of theirs; a timeout's is its timer's.
fn outcomes(rows: Vec<Vec<Value>>) -> Vec<(i64, i64, String, i64)> {
    let mut outcomes: Vec<_> = rows
        .into_iter()
        .map(|row| {
            let Value::TimestampLtz(rowtime) = &row[3] else {
                panic!("rowtime: {row:?}");
            };
            (
                row[0].as_i64().unwrap(),
                row[1].as_i64().unwrap(),
                row[2].as_str().unwrap().to_owned(),
                rowtime.timestamp_millis() / 1000,
            )
        })
        .collect();
    outcomes.sort();
    outcomes
}

crate::on_both_backends! {
    async fn orders_meet_their_payments_with_one_and_four_processors() {
        for processors in [1, 4] {
            let session = session(processors);
            assert_eq!(
                column_names(&session, MATCH).await,
                ["id", "order_id", "EXPR$0", "rowtime"],
                "each table's PARTITION BY columns, the function's, then rowtime"
            );
            let outcomes = outcomes(rows(&session, MATCH).await);
            let messages: Vec<(i64, i64, &str)> = outcomes
                .iter()
                .map(|(id, order_id, message, _)| (*id, *order_id, message.as_str()))
                .collect();
            assert_eq!(
                messages,
                [
                    (1, 1, "paid 100 of 100"),
                    (2, 2, "unpaid 200"),
                    (3, 3, "unpaid 300"),
                    (4, 4, "paid 400 of 400"),
                    // Paid at its deadline: the payment is on time, and the timer cannot fire
                    // before the payments' watermark passes it.
                    (5, 5, "paid 500 of 500"),
                    // Its timer fires at the end of input.
                    (6, 6, "unpaid 600"),
                ],
                "{processors} processors"
            );
            let rowtimes: Vec<i64> = outcomes.iter().map(|o| o.3).collect();
            assert!([0, 30].contains(&rowtimes[0]), "{rowtimes:?}");
            assert_eq!(rowtimes[1..3], [70, 80], "timeouts at their deadlines");
            assert!([5, 30].contains(&rowtimes[3]), "{rowtimes:?}");
            assert!([40, 100].contains(&rowtimes[4]), "{rowtimes:?}");
            assert_eq!(rowtimes[5], 160);
        }
    }
}

crate::on_both_backends! {
    async fn explain_shows_each_table_with_its_keys_and_watermark() {
        let session = session(2);
        let plan = explain(&session, MATCH).await;
        assert!(
            plan.contains(
                "paymentmatch(orders => TABLE PARTITION BY [orders.id] (set semantics), payments => TABLE PARTITION BY [payments.order_id] (set semantics), timeout_seconds => 60) state=[pending"
            ),
            "{plan}"
        );
        assert!(
            plan.contains("on_time=orders.ts watermark=orders.ts - 0 ms")
                && plan.contains("on_time=payments.ts watermark=payments.ts - 0 ms"),
            "{plan}"
        );
    }
}

crate::on_both_backends! {
    async fn the_dataframe_form_takes_further_tables_by_name() {
        let session = session(2);
        let payments = session
            .table("payments")
            .await
            .unwrap()
            .partition_by(vec![col("order_id")]);
        let df = session
            .table("orders")
            .await
            .unwrap()
            .partition_by(vec![col("id")])
            .process(
                session
                    .process_table("PaymentMatch", [lit(60i64)])
                    .unwrap()
                    .table("payments", payments)
                    .on_time("ts"),
            )
            .unwrap();
        let from_dataframe = outcomes(batches_to_rows(&df.collect().await.unwrap()));
        let from_sql = outcomes(rows(&session, MATCH).await);
        let without_time = |o: &[(i64, i64, String, i64)]| {
            o.iter()
                .map(|(a, b, m, _)| (*a, *b, m.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(from_dataframe.len(), 6, "an outcome per order");
        assert_eq!(without_time(&from_dataframe), without_time(&from_sql));
    }
}

crate::on_both_backends! {
    async fn keys_of_other_types_are_compared_as_one() {
        // `order_id` as INT against `id` BIGINT: the keys meet, each table's prefix column keeps
        // its own type.
        let session = session(2);
        let sql = MATCH.replace(
            "TABLE payments PARTITION BY order_id",
            "TABLE (SELECT CAST(order_id AS INT) AS order_id, amount, ts FROM payments) PARTITION BY order_id",
        );
        let outcomes = outcomes(rows(&session, &sql).await);
        assert_eq!(outcomes.len(), 6);
        assert_eq!(outcomes[0].2, "paid 100 of 100");
        assert_eq!(
            crate::support::column_types(&session, &sql).await[..2],
            ["BIGINT".to_owned(), "INT".to_owned()]
        );
    }
}

crate::on_both_backends! {
    async fn tables_that_are_not_co_partitioned_are_planning_errors() {
        let session = session(2);
        let arity = error(
            &session,
            &MATCH.replace("PARTITION BY order_id", "PARTITION BY (order_id, amount)"),
        )
        .await;
        assert!(
            arity.contains("the table arguments of `paymentmatch` are not co-partitioned: `orders` is PARTITION BY (orders.id) (1 column), `payments` is PARTITION BY (payments.order_id, payments.amount) (2 columns)"),
            "{arity}"
        );
        let types = error(
            &session,
            &MATCH.replace(
                "TABLE payments PARTITION BY order_id",
                "TABLE (SELECT order_id, amount, ts, ts AS paid FROM payments) PARTITION BY paid",
            ),
        )
        .await;
        assert!(
            types.contains("PARTITION BY column 1 is `orders.id` (Int64) in `orders` but `paid`"),
            "{types}"
        );
        let missing = error(
            &session,
            "SELECT * FROM PaymentMatch(orders => TABLE orders PARTITION BY id, timeout_seconds => 60, on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert!(
            missing.contains("`paymentmatch` needs its table argument `payments`"),
            "{missing}"
        );
        let unknown_time = error(
            &session,
            &MATCH.replace("DESCRIPTOR(ts)", "DESCRIPTOR(ts, paid_at)"),
        )
        .await;
        assert!(
            unknown_time
                .contains("`on_time` of `paymentmatch` names `paid_at`, which is not a column of any table argument"),
            "{unknown_time}"
        );
    }
}

/// A function declared by hand (as a Rust type implementing `ProcessTableFunction` may be):
/// the macro's compile-time rules do not stand between it and the planner.
struct Declared(Vec<(&'static str, Semantics, bool)>);

impl udf_core::ptf::ProcessTableFunction for Declared {
    fn spec(&self) -> udf_core::FunctionSpec {
        let mut signature = udf_core::Signature::new("eval");
        for (name, semantics, pass_through) in &self.0 {
            signature = signature.arg(udf_core::ArgSpec::new(
                *name,
                udf_core::ArgType::Table(udf_core::TableArg {
                    semantics: *semantics,
                    row: None,
                    optional_partition_by: false,
                    pass_columns_through: *pass_through,
                    require_on_time: false,
                    supports_updates: false,
                }),
            ));
        }
        udf_core::FunctionSpec::new("Declared", udf_core::FunctionKind::ProcessTable).signature(
            signature.output(udf_core::OutputType::Fixed(
                udf_core::types::DataType::string(),
            )),
        )
    }

    fn processor(
        self: Arc<Self>,
        _setup: udf_core::ptf::ProcessorSetup,
    ) -> udf_core::Result<Box<dyn udf_core::ptf::Processor>> {
        Err(udf_core::Error::msg("never planned"))
    }
}

crate::on_both_backends! {
    async fn row_semantics_and_pass_through_take_a_single_table() {
        let cases = [
            (
                vec![("a", Semantics::Row, false), ("b", Semantics::Set, false)],
                "a => TABLE orders, b => TABLE payments PARTITION BY order_id",
                "table argument `a` of `declared` has row semantics, next to other table arguments: several tables must all have set semantics",
            ),
            (
                vec![("a", Semantics::Set, true), ("b", Semantics::Set, false)],
                "a => TABLE orders PARTITION BY id, b => TABLE payments PARTITION BY order_id",
                "table argument `a` of `declared` passes its columns through, which takes a single table argument; `declared` has 2",
            ),
        ];
        for (tables, args, expected) in cases {
            let session = session(2);
            let function = udf_core::Function::Process(Arc::new(Declared(tables)));
            session.register_as("Declared", function).unwrap();
            let message = error(&session, &format!("SELECT * FROM Declared({args})")).await;
            assert!(message.contains(expected), "{message}");
        }
    }
}

/// Reports each table's watermark and the processor's as each row sees them, and registers a
/// timer at the row's time.
#[derive(Clone, Copy, Debug, Default)]
struct WatermarkProbe;

#[ptf(name = "WatermarkProbe")]
impl WatermarkProbe {
    fn eval(
        &self,
        ctx: &mut Context,
        #[argument(set_semantic_table)] a: Option<Row>,
        #[argument(set_semantic_table)] b: Option<Row>,
        out: &mut Collector<String>,
    ) {
        let mut time = ctx.time_context();
        let shown = |w: Option<chrono::DateTime<chrono::Utc>>| {
            w.map_or("-".to_owned(), |w| w.timestamp_millis().to_string())
        };
        out.collect(format!(
            "{} row: a={} b={} current={}",
            if a.is_some() {
                "a"
            } else if b.is_some() {
                "b"
            } else {
                "?"
            },
            shown(time.table_watermark("a")),
            shown(time.table_watermark("b")),
            shown(time.current_watermark()),
        ));
        if let Some(at) = time.time_millis() {
            time.register_on_time_millis(&format!("t{at}"), at);
        }
    }

    fn on_timer(&self, ctx: &mut OnTimerContext, out: &mut Collector<String>) {
        let time = ctx.time_context();
        out.collect(format!(
            "fired at {} (a={:?})",
            time.current_watermark().map_or(0, |w| w.timestamp_millis()),
            time.table_watermark("a")
        ));
    }
}

crate::on_both_backends! {
    async fn timers_wait_for_the_slower_tables_watermark() {
        let schema = crate::ptf::harness::schema();
        let rows = |ms: i64| crate::ptf::harness::rows(&[("x", ms)]);
        let mut harness = udf_runtime::PtfHarness::builder(WatermarkProbe, schema.clone())
            .table("a")
            .partition_by(["k"])
            .and_table("b", schema.clone())
            .partition_by(["k"])
            .on_time("ts")
            .build()
            .await
            .unwrap();
        let messages = |harness: &mut udf_runtime::PtfHarness| -> Vec<String> {
            harness
                .take_rows()
                .unwrap()
                .into_iter()
                .map(|row| row[2].as_str().unwrap().to_owned())
                .collect()
        };
        harness.push_to("a", rows(10)).unwrap();
        harness.advance_table_watermark("a", 100).unwrap();
        harness.push_to("b", rows(20)).unwrap();
        harness.advance_table_watermark("b", 5).unwrap();
        harness.push_to("b", rows(30)).unwrap();
        harness.push_to("a", rows(110)).unwrap();
        assert_eq!(
            messages(&mut harness),
            [
                "a row: a=- b=- current=-",
                // `a` is at 100, `b` has none yet: no current watermark.
                "b row: a=100 b=- current=-",
                "b row: a=100 b=5 current=5",
                "a row: a=100 b=5 current=5",
            ]
        );
        assert!(
            harness.take_fired_timers().unwrap().is_empty(),
            "no timer before the slower table's watermark passes it"
        );
        harness.advance_table_watermark("b", 50).unwrap();
        let fired: Vec<i64> = harness
            .take_fired_timers()
            .unwrap()
            .iter()
            .map(|t| t.time)
            .collect();
        assert_eq!(fired, [10, 20, 30]);
        assert_eq!(
            messages(&mut harness),
            [
                "fired at 50 (a=None)",
                "fired at 50 (a=None)",
                "fired at 50 (a=None)"
            ],
            "a timer belongs to no table: `table_watermark` is None in on_timer"
        );
        harness.end_input().unwrap();
        assert_eq!(harness.take_fired_timers().unwrap()[0].time, 110);
    }
}

/// Flink's `MultiInputFunction` (its `process-multi-input` program): emits both table
/// arguments as it receives them, the absent one as `null`.
#[ptf(name = "MultiInput")]
fn multi_input(
    #[argument(set_semantic_table)] in1: Option<Row>,
    #[argument(set_semantic_table)] in2: Option<Row>,
    out: &mut Collector<String>,
) {
    let shown = |row: Option<Row>| {
        row.map_or("null".to_owned(), |row| {
            let values: Vec<String> = row.values().iter().map(ToString::to_string).collect();
            format!("+I[{}]", values.join(", "))
        })
    };
    out.collect(format!("{{{}, {}}}", shown(in1), shown(in2)));
}

crate::on_both_backends! {
    async fn flinks_multi_input_program() {
        let session = session_of(2);
        let names = |names: &[&str]| names.iter().map(|n| Value::from(*n)).collect::<Vec<_>>();
        let t = [
            column(
                "name",
                "STRING",
                names(&["Bob", "Alice", "Bob", "Bob", "Alice"]),
            ),
            column(
                "score",
                "INT",
                [12, 42, 99, 100, 400].map(Value::from).to_vec(),
            ),
        ];
        let city = [
            column("name", "STRING", names(&["Bob", "Alice", "Charly"])),
            column("city", "STRING", names(&["London", "Berlin", "Paris"])),
        ];
        session.register_batch("t", batch(&t)).unwrap();
        session.register_batch("city", batch(&city)).unwrap();
        session.register(multi_input).unwrap();
        let mut got: Vec<String> = rows(
            &session,
            "SELECT * FROM MultiInput(in1 => TABLE t PARTITION BY name, in2 => TABLE city PARTITION BY name)",
        )
        .await
        .into_iter()
        .map(|row| {
            let values: Vec<String> = row.iter().map(ToString::to_string).collect();
            format!("+I[{}]", values.join(", "))
        })
        .collect();
        got.sort();
        // Flink 2.3's expected output of the program, in its order; compared as a multiset, as
        // the two tables' rows interleave as they arrive.
        let mut expected = vec![
            "+I[Bob, Bob, {+I[Bob, 12], null}]",
            "+I[Bob, Bob, {null, +I[Bob, London]}]",
            "+I[Alice, Alice, {+I[Alice, 42], null}]",
            "+I[Alice, Alice, {null, +I[Alice, Berlin]}]",
            "+I[Bob, Bob, {+I[Bob, 99], null}]",
            "+I[Charly, Charly, {null, +I[Charly, Paris]}]",
            "+I[Bob, Bob, {+I[Bob, 100], null}]",
            "+I[Alice, Alice, {+I[Alice, 400], null}]",
        ];
        expected.sort();
        assert_eq!(got, expected);
        assert_eq!(
            column_names(&session, "SELECT * FROM MultiInput(in1 => TABLE t PARTITION BY name, in2 => TABLE city PARTITION BY name)").await,
            ["name", "name0", "EXPR$0"],
            "Flink's suffix for the second table's key column"
        );
    }
}

/// Emits which table's row it got, with the row's time and the processor's watermark.
#[ptf(name = "Arrivals")]
fn arrivals(
    ctx: &mut Context,
    #[argument(set_semantic_table)] a: Option<Row>,
    #[argument(set_semantic_table)] b: Option<Row>,
    out: &mut Collector<String>,
) {
    let time = ctx.time_context();
    let table = if a.is_some() {
        "a"
    } else if b.is_some() {
        "b"
    } else {
        "?"
    };
    out.collect(format!(
        "{table} {} under {:?}",
        time.time_millis().unwrap_or(-1),
        time.table_watermark(table).map(|w| w.timestamp_millis())
    ));
}

crate::on_both_backends! {
    async fn order_by_sorts_each_table_by_its_own_watermark() {
        let schema = crate::ptf::harness::schema();
        let rows = |times: &[i64]| {
            let events: Vec<(&str, i64)> = times.iter().map(|t| ("x", *t)).collect();
            crate::ptf::harness::rows(&events)
        };
        let mut harness = udf_runtime::PtfHarness::builder(arrivals, schema.clone())
            .table("a")
            .partition_by(["k"])
            .order_by(["ts"])
            .and_table("b", schema.clone())
            .partition_by(["k"])
            .on_time("ts")
            .build()
            .await
            .unwrap();
        // `a`'s rows wait for `a`'s watermark; `b`'s (no ORDER BY) come through at once.
        harness.push_to("a", rows(&[30, 10])).unwrap();
        harness.push_to("b", rows(&[5])).unwrap();
        harness.advance_table_watermark("a", 20).unwrap();
        // Late for `a` (at or before its watermark): dropped.
        harness.push_to("a", rows(&[15])).unwrap();
        harness.advance_table_watermark("b", 100).unwrap();
        harness.push_to("a", rows(&[25])).unwrap();
        harness.advance_table_watermark("a", 40).unwrap();
        harness.push_to("a", rows(&[50])).unwrap();
        harness.end_input().unwrap();
        let messages: Vec<String> = harness
            .take_rows()
            .unwrap()
            .into_iter()
            .map(|row| row[2].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            messages,
            [
                "b 5 under None",
                // Released by `a`'s advance to 20, under `a`'s watermark before it.
                "a 10 under None",
                "a 25 under Some(20)",
                "a 30 under Some(20)",
                "a 50 under Some(40)",
            ]
        );
    }
}

crate::on_both_backends! {
    async fn order_by_on_both_tables_gives_the_same_outcomes() {
        for processors in [1, 4] {
            let session = session(processors);
            let sorted = MATCH
                .replace("PARTITION BY id", "PARTITION BY id ORDER BY ts")
                .replace("PARTITION BY order_id", "PARTITION BY order_id ORDER BY ts");
            let messages = |outcomes: Vec<(i64, i64, String, i64)>| {
                outcomes
                    .into_iter()
                    .map(|(id, _, message, _)| (id, message))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                messages(outcomes(rows(&session, &sorted).await)),
                messages(outcomes(rows(&session, MATCH).await)),
                "{processors} processors"
            );
        }
    }
}

/// Reports how each table argument was passed.
#[ptf(name = "Described")]
fn described(
    ctx: &mut Context,
    #[argument(set_semantic_table)] orders: Option<Row>,
    #[argument(set_semantic_table)] payments: Option<Row>,
    out: &mut Collector<String>,
) {
    let _ = (orders, payments);
    let shown = |name: &str| {
        ctx.table_semantics_for(name).map_or("?".to_owned(), |t| {
            format!(
                "{name}: keys {:?} order {:?} time {:?}",
                t.partition_by_columns(),
                t.order_by_columns(),
                t.time_column()
            )
        })
    };
    out.collect(format!("{}; {}", shown("orders"), shown("payments")));
}

crate::on_both_backends! {
    async fn each_table_reports_its_own_semantics() {
        let session = session(1);
        session.register(described).unwrap();
        let rows = rows(
            &session,
            "SELECT * FROM Described(orders => TABLE orders PARTITION BY id ORDER BY ts, payments => TABLE (SELECT ts, amount, order_id FROM payments) PARTITION BY order_id, on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert_eq!(
            rows[0][2].as_str().unwrap(),
            "orders: keys [0] order [2] time Some(2); payments: keys [2] order [] time Some(0)"
        );
    }
}
