use udf_core::Value;
use udf_examples::catalog::register_all;
use udf_runtime::Session;
use udf_runtime::ballista::{PlanCodec, scheduler_session};
use udf_runtime::datafusion::physical_plan::displayable;

use crate::support::{batch, column, events};

/// Queries of every kind a cluster takes today: scalar, async scalar, aggregate (with a
/// function without `merge`), lateral joins of sync and async table functions, a call on its
/// own, table aggregates (grouped, merged, emitting a changelog), process table functions
/// (keyed, row by row with a scalar argument, without a table, with timers and ORDER BY on a
/// watermark), files and in-memory tables.
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

#[tokio::test]
async fn logical_plans_come_back_equal() {
    let session = session().await;
    let codec = PlanCodec::of(&session);
    for sql in QUERIES {
        let plan = session
            .sql(sql)
            .await
            .unwrap()
            .into_optimized_plan()
            .unwrap();
        let bytes = codec
            .encode_logical(&plan)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        let decoded = codec
            .decode_logical(&bytes)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(decoded, plan, "{sql}");
    }
}

#[tokio::test]
async fn physical_plans_come_back_the_same() {
    physical_round_trip(&session().await).await;
}

/// The plans a scheduler makes: PTFs with their shuffles, stamped with watermarks where a
/// time attribute needs them.
#[tokio::test]
async fn physical_plans_for_a_cluster_come_back_the_same() {
    let session = with_tables(scheduler_session(register_all).unwrap()).await;
    let plans = physical_round_trip(&session).await;
    assert!(
        plans.iter().any(|plan| plan.contains("ShuffleStampExec")),
        "{plans:#?}"
    );
}

/// Each query's physical plan, encoded and decoded, displays as before; the plans shown.
async fn physical_round_trip(session: &Session) -> Vec<String> {
    let codec = PlanCodec::of(session);
    let mut plans = Vec::new();
    for sql in QUERIES {
        let plan = session
            .sql(sql)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let bytes = codec
            .encode_physical(plan.clone())
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        let decoded = codec
            .decode_physical(&bytes)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        // Execution plans have no equality: their full display (with schemas) stands in.
        let shown = |plan| {
            displayable(plan)
                .set_show_schema(true)
                .indent(true)
                .to_string()
        };
        assert_eq!(shown(decoded.as_ref()), shown(plan.as_ref()), "{sql}");
        plans.push(shown(plan.as_ref()));
    }
    plans
}
