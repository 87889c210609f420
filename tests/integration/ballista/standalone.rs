use udf_core::Value;
use udf_core::prelude::*;
use udf_examples::catalog::register_all;
use udf_runtime::Session;

use std::sync::Arc;
use std::time::Duration;

use udf_runtime::datafusion::datasource::MemTable;

use crate::support::{Column, batch, column, error, events, explain, rows, strs};

/// A standalone cluster and a local session, each with every example function and the
/// bundled `orders` table, and `extra` tables registered on both.
async fn cluster_and_local(extra: &[(&str, Vec<Column>)]) -> (Session, Session) {
    let cluster = Session::standalone(register_all)
        .await
        .expect("a standalone cluster");
    let local = Session::new();
    register_all(&local).unwrap();
    for session in [&cluster, &local] {
        udf_examples::register_orders(session).await.unwrap();
        for (name, columns) in extra {
            session.register_batch(*name, batch(columns)).unwrap();
        }
    }
    (cluster, local)
}

/// `sql` gives the same rows on the cluster as locally, and some rows.
async fn same_rows(cluster: &Session, local: &Session, sql: &str) -> Vec<Vec<Value>> {
    let expected = rows(local, sql).await;
    assert!(!expected.is_empty(), "{sql} gives no rows locally");
    assert_eq!(rows(cluster, sql).await, expected, "{sql}");
    expected
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scalar_and_aggregate_functions_give_the_local_rows() {
    let (cluster, local) = cluster_and_local(&[]).await;
    same_rows(
        &cluster,
        &local,
        "SELECT order_id, SubstringFunction(product, 0, 4) AS short, \
                SubstringInclusive(s => product, `end` => 4, begin => 0) AS inclusive, \
                string_hash(customer, 'c') AS hashed, power_func(price, 2.0) AS squared \
         FROM orders ORDER BY order_id",
    )
    .await;
    // A job parameter (`hashcode_factor`) reaches the function where it runs.
    same_rows(
        &cluster,
        &local,
        "SELECT customer, hashCode(customer) AS h, SUM(price * quantity) AS spent \
         FROM orders GROUP BY customer ORDER BY customer",
    )
    .await;
    let averages = same_rows(
        &cluster,
        &local,
        "SELECT customer, WeightedAvg(CAST(quantity AS BIGINT), CAST(order_id AS INT)) AS w, \
                COUNT(*) AS n \
         FROM orders GROUP BY customer ORDER BY customer",
    )
    .await;
    // `data/orders.csv` has orders of eight customers.
    assert_eq!(averages.len(), 8, "one row per customer: {averages:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_tables_travel_with_the_plan() {
    let values = column(
        "v",
        "BIGINT",
        vec![
            Value::BigInt(4),
            Value::BigInt(2),
            Value::Null,
            Value::BigInt(2),
        ],
    );
    let keys = column(
        "k",
        "STRING",
        strs(&[Some("a"), Some("b"), Some("a"), None]),
    );
    let weights = column(
        "w",
        "INT",
        vec![Value::Int(1), Value::Int(3), Value::Int(5), Value::Int(1)],
    );
    let (cluster, local) = cluster_and_local(&[("t", vec![keys, values, weights])]).await;
    let rows = same_rows(
        &cluster,
        &local,
        "SELECT k, WeightedAvg(v, w) AS avg, COUNT(v) AS n FROM t GROUP BY k ORDER BY k",
    )
    .await;
    assert_eq!(rows.len(), 3, "keys a, b and NULL: {rows:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_functions_joined_laterally_give_the_local_rows() {
    let bounds = column(
        "hi",
        "INT",
        vec![Value::Int(3), Value::Int(0), Value::Int(2)],
    );
    let ids = column(
        "id",
        "INT",
        vec![Value::Int(1), Value::Int(2), Value::Int(3)],
    );
    let (cluster, local) = cluster_and_local(&[("bounds", vec![ids, bounds])]).await;
    same_rows(
        &cluster,
        &local,
        "SELECT order_id, word, length FROM orders, \
                LATERAL TABLE(SplitFunction(product)) AS x(word, length) \
         ORDER BY order_id, word",
    )
    .await;
    // The LEFT join keeps the row whose series is empty (hi = 0), with NULL.
    let series = same_rows(
        &cluster,
        &local,
        "SELECT id, f0 FROM bounds LEFT JOIN LATERAL TABLE(generate_series_function(1, hi)) \
         ON TRUE ORDER BY id, f0",
    )
    .await;
    assert_eq!(series.len(), 3 + 1 + 2, "{series:?}");
    // An asynchronous table function, and a call on its own.
    same_rows(
        &cluster,
        &local,
        "SELECT customer, tour FROM orders, LATERAL TABLE(AsyncBackgroundFunction(customer)) \
         ORDER BY order_id",
    )
    .await;
    same_rows(
        &cluster,
        &local,
        "SELECT * FROM TABLE(generate_series_function(1, 4))",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_aggregates_give_the_local_rows() {
    let (cluster, local) = cluster_and_local(&[]).await;
    let top = same_rows(
        &cluster,
        &local,
        "SELECT * FROM Top2(TABLE (SELECT customer, CAST(quantity AS INT) AS q FROM orders) \
         PARTITION BY customer) ORDER BY customer, rank",
    )
    .await;
    assert!(
        top.len() > 8,
        "eight customers, some with two orders: {top:?}"
    );
    // One group of every row: the partial accumulators are merged.
    same_rows(
        &cluster,
        &local,
        "SELECT * FROM Top2(TABLE (SELECT CAST(quantity AS INT) AS q FROM orders)) ORDER BY rank",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn process_table_functions_give_the_local_rows() {
    let (cluster, local) = cluster_and_local(&[]).await;
    // Keyed state per customer: the cluster shuffles rows by key, one processor per partition.
    let counts = same_rows(
        &cluster,
        &local,
        "SELECT * FROM counter(input => TABLE (SELECT customer, order_id FROM orders) \
         PARTITION BY customer) ORDER BY customer, cnt",
    )
    .await;
    assert_eq!(counts.len(), 12, "one row per order: {counts:?}");
    // Row semantics: rows processed where they are, a scalar argument with the call.
    let repeated = same_rows(
        &cluster,
        &local,
        "SELECT * FROM RepeatRows(input => TABLE (SELECT CAST(quantity AS INT) AS v FROM orders), \
         times => 2) ORDER BY copy, v2",
    )
    .await;
    assert_eq!(repeated.len(), 24, "two copies of each order: {repeated:?}");
    // Without a table: one call over one empty row.
    let duplicated = same_rows(&cluster, &local, "SELECT * FROM DuplicatorFunction(1, 'a')").await;
    assert_eq!(duplicated.len(), 2, "{duplicated:?}");
    assert!(
        explain(
            &cluster,
            "SELECT * FROM counter(input => TABLE orders PARTITION BY customer)"
        )
        .await
        .contains("rows partitioned by key upstream"),
        "the plan shows the shuffle"
    );
}

/// A cluster and a local session, each with `events_in_two_partitions` and a watermark on
/// `ts` (no delay).
async fn with_events_in_two_partitions() -> (Session, Session) {
    let (cluster, local) = cluster_and_local(&[]).await;
    for session in [&cluster, &local] {
        session
            .register_table("events", events_in_two_partitions())
            .unwrap();
        session.declare_watermark("events", "ts", Duration::ZERO);
    }
    (cluster, local)
}

/// `events` in two partitions: key `a` at 1 s, 2 s, ... 10 s in one, key `b` at 100 s, 101 s,
/// ... 109 s in the other.
fn events_in_two_partitions() -> Arc<MemTable> {
    let a = batch(&events(
        &["a"; 10],
        &(1..=10).map(|s| s * 1000).collect::<Vec<_>>(),
    ));
    let b = batch(&events(
        &["b"; 10],
        &(100..110).map(|s| s * 1000).collect::<Vec<_>>(),
    ));
    Arc::new(MemTable::try_new(a.schema(), vec![vec![a], vec![b]]).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watermarks_combine_over_the_source_partitions_across_the_shuffle() {
    let (cluster, local) = with_events_in_two_partitions().await;
    // ORDER BY ts holds each row until the watermark passes it and drops rows behind it. A
    // processor's watermark is the smaller of the two partitions' (a's times trail b's), so
    // no row is ever behind it, whichever partition's rows come first: each is released, in
    // time order, under a watermark before its time. Taking the larger, or the shuffled
    // rows as one source, would drop a's rows.
    let sql = "SELECT k, seq, wm FROM SeenOrder(\
               input => TABLE events PARTITION BY k ORDER BY ts) ORDER BY k, seq";
    for session in [&cluster, &local] {
        let released = rows(session, sql).await;
        assert_eq!(released.len(), 20, "every row released: {released:?}");
        for (index, row) in released.iter().enumerate() {
            let (key, seq) = (if index < 10 { "a" } else { "b" }, index % 10 + 1);
            let first = if key == "a" { 1 } else { 100 };
            assert_eq!(row[0], Value::from(key), "{released:?}");
            assert_eq!(row[1], Value::BigInt(seq as i64), "{released:?}");
            // Before every partition has a watermark, there is none.
            if let Value::BigInt(watermark) = row[2] {
                assert!(
                    watermark < (first + seq as i64 - 1) * 1000,
                    "row {index} released under a watermark past its time: {released:?}"
                );
            } else {
                assert_eq!(row[2], Value::Null, "{released:?}");
            }
        }
    }
    // Timers: each key's timer (named, `gap_ms` after its latest row) fires once, at the end
    // of input at the latest, with the key's row count.
    let sql = "SELECT k, seen, fired_at FROM Timeout(input => TABLE events PARTITION BY k, \
               on_time => DESCRIPTOR(ts), gap_ms => CAST(500000 AS BIGINT)) ORDER BY k";
    let fired = same_rows(&cluster, &local, sql).await;
    let timer = |key: &str, at: i64| vec![Value::from(key), Value::BigInt(10), Value::BigInt(at)];
    assert_eq!(fired, vec![timer("a", 510_000), timer("b", 609_000)]);
    let plan = explain(&cluster, sql).await;
    assert!(
        plan.contains("ShuffleStampExec") && plan.contains("stamped with their watermarks"),
        "{plan}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_aggregates_close_on_the_watermark_of_every_source_partition() {
    let (cluster, local) = with_events_in_two_partitions().await;
    // A window closes when the smaller of the two partitions' watermarks passes its end, so
    // no row of `a` (whose times trail `b`'s) is late: every row is counted. Closing on `b`'s
    // watermark alone would drop all of `a`'s.
    let window = |start: i64, end: i64| {
        let at =
            |s: i64| Value::Timestamp(chrono::DateTime::from_timestamp(s, 0).unwrap().naive_utc());
        (at(start), at(end))
    };
    let keyed = "SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, \
                 DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k \
                 ORDER BY k, window_start";
    let expected: Vec<Vec<Value>> = [
        ("a", 0, 4),
        ("a", 5, 5),
        ("a", 10, 1),
        ("b", 100, 5),
        ("b", 105, 5),
    ]
    .into_iter()
    .map(|(key, start, n)| {
        let (start, end) = window(start, start + 5);
        vec![Value::from(key), start, end, Value::BigInt(n)]
    })
    .collect();
    assert_eq!(same_rows(&cluster, &local, keyed).await, expected);
    let plan = explain(&cluster, keyed).await;
    assert!(
        plan.contains("ShuffleStampExec")
            && plan.contains("WindowAggregateExec")
            && plan.contains("stamped with their watermarks"),
        "{plan}"
    );
    // Without keys besides the window, one processor reads both partitions.
    let whole = "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, \
                 DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end \
                 ORDER BY window_start";
    let expected: Vec<Vec<Value>> = [(0, 4), (5, 5), (10, 1), (100, 5), (105, 5)]
        .into_iter()
        .map(|(start, n)| vec![window(start, start).0, Value::BigInt(n)])
        .collect();
    assert_eq!(same_rows(&cluster, &local, whole).await, expected);
    // A window table function alone: each row once per window that holds it (two of 2 s
    // hopping by 1 s), where it is.
    let hopped = "SELECT k, ts, window_start FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), \
                  INTERVAL '1' SECOND, INTERVAL '2' SECOND)) ORDER BY k, ts, window_start";
    let hopped = same_rows(&cluster, &local, hopped).await;
    assert_eq!(hopped.len(), 40, "{hopped:?}");
    let (first, second) = (&hopped[0], &hopped[1]);
    assert_eq!(
        (&first[0], &second[0]),
        (&Value::from("a"), &Value::from("a"))
    );
    assert_eq!((&first[2], &second[2]), (&window(0, 0).0, &window(1, 1).0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_fed_by_the_application_is_refused_by_name() {
    let (cluster, _) = cluster_and_local(&[]).await;
    let schema = batch(&events(&["a"], &[1000])).schema();
    let _feed = cluster.register_feed("clicks", schema).unwrap();
    let message = error(&cluster, "SELECT k FROM clicks").await;
    assert!(
        message.contains("table `clicks` cannot be read by a Ballista cluster"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_processing_clock_of_this_process_is_refused() {
    let (cluster, local) = cluster_and_local(&[]).await;
    let clock = || std::sync::Arc::new(udf_core::ptf::ManualClock::default());
    let message = cluster
        .set_processing_clock(clock())
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("cannot set a processing clock"),
        "{message}"
    );
    local.set_processing_clock(clock()).unwrap();
}

/// Rows of a key seen so far, over both tables.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Seen {
    rows: i64,
}

/// Counts each key's rows of two tables together: a key's last count is its rows in both
/// only if both tables' rows of the key meet in one processor.
#[ptf(name = "SeenTogether")]
#[data_type("ROW<seen BIGINT>")]
pub(super) fn seen_together(
    #[state] seen: &mut Seen,
    #[argument(set_semantic_table)] a: Option<Row>,
    #[argument(set_semantic_table)] b: Option<Row>,
    out: &mut Collector<Row>,
) {
    let _ = (a, b);
    seen.rows += 1;
    out.collect(Row::of([seen.rows.into()]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tables_meet_by_key_on_a_cluster() {
    let names = |names: &[&str]| names.iter().map(|n| Value::from(*n)).collect::<Vec<_>>();
    let a = vec![column(
        "name",
        "STRING",
        names(&["Bob", "Alice", "Bob", "Bob", "Alice", "Dora"]),
    )];
    let b = vec![column(
        "who",
        "STRING",
        names(&["Bob", "Alice", "Charly", "Dora"]),
    )];
    let (cluster, local) = cluster_and_local(&[("a", a), ("b", b)]).await;
    for session in [&cluster, &local] {
        session.register(seen_together).unwrap();
    }
    let sql = "SELECT name, MAX(seen) AS rows FROM SeenTogether(\
               a => TABLE a PARTITION BY name, b => TABLE b PARTITION BY who) \
               GROUP BY name ORDER BY name";
    let together = same_rows(&cluster, &local, sql).await;
    // Alice 2 + 1, Bob 3 + 1, Charly 0 + 1, Dora 1 + 1.
    let count = |name: &str, rows: i64| vec![Value::from(name), Value::BigInt(rows)];
    assert_eq!(
        together,
        vec![
            count("Alice", 3),
            count("Bob", 4),
            count("Charly", 1),
            count("Dora", 2)
        ]
    );
}
