use udf_core::Value;
use udf_examples::catalog::register_all;
use udf_runtime::Session;
use udf_runtime::ballista::{PlanCodec, RoundTrip, scheduler_session};
use udf_runtime::datafusion::prelude::DataFrame;

use crate::conformance::{self, BOUNDED};
use crate::support::{batch, column, events};

/// Queries of every kind a cluster takes today: scalar, async scalar, aggregate (with a
/// function without `merge`), lateral joins of sync and async table functions, a call on its
/// own, table aggregates (grouped, merged, emitting a changelog), process table functions
/// (keyed, row by row with a scalar argument, without a table, with timers and ORDER BY on a
/// watermark), window table functions and window aggregates (keyed and not, with a project
/// function, DISTINCT and FILTER), files and in-memory tables.
const QUERIES: &[&str] = &[
    "SELECT order_id, SubstringFunction(product, 0, 4), string_hash(customer, 'c'), \
            power_func(price, 2.0) FROM orders WHERE quantity > 1",
    "SELECT GetBeverageName(CAST(order_id % 3 AS INT)) FROM orders",
    "SELECT customer, hashCode(customer), weighted_avg(price, quantity), \
            WeightedAvg(CAST(quantity AS BIGINT), CAST(order_id AS INT)) \
     FROM orders GROUP BY customer",
    "SELECT k, WeightedAvg(v, w), COUNT(*) FROM t GROUP BY k",
    "SELECT order_id, word, length FROM orders, \
            LATERAL TABLE(SplitFunction(product)) AS x(word, length)",
    "SELECT k, f0 FROM t LEFT JOIN LATERAL TABLE(generate_series_function(1, w)) ON TRUE",
    "SELECT customer, tour FROM orders, LATERAL TABLE(AsyncBackgroundFunction(customer))",
    "SELECT * FROM TABLE(generate_series_function(1, 4))",
    "SELECT * FROM Top2(TABLE (SELECT customer, CAST(quantity AS INT) AS q FROM orders) \
     PARTITION BY customer)",
    "SELECT * FROM Top2(TABLE (SELECT CAST(quantity AS INT) AS q FROM orders))",
    "SELECT * FROM Top2WithRetract(TABLE (SELECT k, CAST(v AS INT) AS v FROM t) PARTITION BY k, \
     changelog => TRUE)",
    "SELECT * FROM counter(input => TABLE (SELECT customer, order_id FROM orders) \
     PARTITION BY customer)",
    "SELECT * FROM RepeatRows(input => TABLE (SELECT CAST(quantity AS INT) AS v FROM orders), \
     times => 2)",
    "SELECT * FROM DuplicatorFunction(1, 'a')",
    "SELECT * FROM SeenOrder(input => TABLE events PARTITION BY k ORDER BY ts)",
    "SELECT * FROM Timeout(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts), \
     gap_ms => CAST(3000 AS BIGINT))",
    "SELECT * FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '1' SECOND, \
     INTERVAL '2' SECOND))",
    "SELECT window_start, window_end, k, COUNT(*), MAX(ts), weighted_avg(1.0, 2.0) FROM TABLE(TUMBLE(TABLE events, \
     DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k",
    "SELECT window_start, window_end, COUNT(DISTINCT k) FILTER (WHERE k <> 'c') \
     FROM TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '4' SECOND)) \
     GROUP BY window_start, window_end",
    "SELECT window_start, window_end, k, string_concat(k, '-') \
     FROM TABLE(SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)) \
     GROUP BY window_start, window_end, k",
];

async fn session() -> Session {
    let session = Session::new();
    register_all(&session).unwrap();
    with_tables(session).await
}

/// `session` with the queries' tables.
async fn with_tables(session: Session) -> Session {
    udf_examples::register_orders(&session).await.unwrap();
    session
        .register_batch("events", batch(&events(&["a", "b"], &[1000, 2000])))
        .unwrap();
    session.declare_watermark("events", "ts", std::time::Duration::ZERO);
    let table = batch(&[
        column("k", "STRING", vec![Value::from("a"), Value::from("b")]),
        column("v", "BIGINT", vec![Value::BigInt(4), Value::BigInt(2)]),
        column("w", "INT", vec![Value::Int(1), Value::Int(3)]),
    ]);
    session.register_batch("t", table).unwrap();
    session
}

/// Each query's plans come back through the codecs as they went (the logical plan equal, the
/// physical plan displayed the same); the physical plans shown.
async fn round_trips(session: &Session) -> Vec<String> {
    let codec = PlanCodec::of(session);
    let mut plans = Vec::new();
    for sql in QUERIES {
        let query = session.sql(sql).await.unwrap();
        plans.push(comes_back(&codec, query, sql).await);
    }
    plans
}

/// `query`'s plans, through `codec` and back, as they went; the physical plan shown.
async fn comes_back(codec: &PlanCodec, query: DataFrame, name: &str) -> String {
    let trip = codec
        .round_trip(query)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(trip.logical_back, trip.logical, "{name}");
    let shown = RoundTrip::shown(&trip.physical);
    assert_eq!(RoundTrip::shown(&trip.physical_back), shown, "{name}");
    shown
}

#[tokio::test]
async fn plans_come_back_the_same() {
    round_trips(&session().await).await;
}

/// The plans a scheduler makes: PTFs and window aggregates with their shuffles, stamped with
/// watermarks where a time attribute needs them.
#[tokio::test]
async fn plans_for_a_cluster_come_back_the_same() {
    let session = with_tables(scheduler_session(register_all).unwrap()).await;
    let plans = round_trips(&session).await;
    let stamped = |exec: &str| {
        plans
            .iter()
            .any(|plan| plan.contains(exec) && plan.contains("ShuffleStampExec"))
    };
    assert!(stamped("ProcessTableFunctionExec"), "{plans:#?}");
    assert!(stamped("WindowAggregateExec"), "{plans:#?}");
}

/// Every recorded Flink case: a bounded one's plans (as a scheduler makes them) come back
/// through the codecs as they went; a streaming one, over a fed table, is refused by name
/// when it is sent. A case Flink refused to plan has no plan: its own test checks the error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conformance_case_comes_back_or_is_refused_by_name() {
    let (mut bounded, mut refused) = (0, 0);
    for name in conformance::names() {
        let case = conformance::load(&name);
        if case.error.is_some() {
            continue;
        }
        let session = scheduler_session(|session| {
            register_all(session)?;
            conformance::register_bounded_functions(session)?;
            session.register(udf_examples::ptf::conformance::kind_echo)
        })
        .unwrap();
        let codec = PlanCodec::of(&session);
        if let Some(spec) = BOUNDED.iter().find(|b| b.name == name) {
            spec.register_input(&case, &session);
            let query = session.sql(&case.query).await.unwrap();
            comes_back(&codec, query, &name).await;
            bounded += 1;
        } else {
            let _feed = conformance::streaming::register_input(&case, &session);
            let frame = conformance::streaming::case_query(&case, &session).await;
            let logical = frame.into_optimized_plan().unwrap();
            let message = codec.encode_logical(&logical).unwrap_err().to_string();
            let table = &case.input.view_name;
            assert!(
                message.contains(&format!(
                    "table `{table}` cannot be read by a Ballista cluster"
                )) || message.contains("cannot run on a Ballista cluster yet"),
                "{name}: {message}"
            );
            refused += 1;
        }
    }
    assert_eq!(bounded, BOUNDED.len(), "every bounded case went round");
    assert!(refused >= 3, "only {refused} streaming cases were refused");
}
