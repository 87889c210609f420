//! GROUP BY (rules 14, 16 of docs/semantics.md): one accumulator per group; two-phase aggregation over several
//! partitions gives the one-phase result; FILTER; NULL arguments skip the row.

use udf_core::Value;
use udf_examples::aggregate::weighted_average::WeightedAverageFunction;
use udf_runtime::prelude::*;

use super::sales;
use crate::support::{batches_to_rows, explain, partitioned_session, rows};

const QUERY: &str = "SELECT category, weighted_avg(price, quantity) AS avg, \
                     weighted_avg(price, quantity) FILTER (WHERE price > 1.5) AS filtered \
                     FROM sales GROUP BY category ORDER BY category";

/// tea: (2*1 + 4*1 + 6*2 + 1*4) / 8 = 2.75; coffee skips the NULL price: (3*2 + 5*2 + 1*4) / 8 = 2.5.
/// With FILTER (price > 1.5): tea (2 + 4 + 12) / 4 = 4.5, coffee (6 + 10) / 4 = 4.
fn expected() -> Vec<Vec<Value>> {
    vec![
        vec![
            Value::from("coffee"),
            Value::Double(2.5),
            Value::Double(4.0),
        ],
        vec![Value::from("tea"), Value::Double(2.75), Value::Double(4.5)],
    ]
}

#[tokio::test]
async fn two_phase_aggregation_equals_one_phase() {
    for partitions in [1, 2, 3] {
        let session = partitioned_session("sales", &sales(), partitions);
        session.register(WeightedAverageFunction).unwrap();
        assert_eq!(
            rows(&session, QUERY).await,
            expected(),
            "{partitions} partitions"
        );
    }
    let session = partitioned_session("sales", &sales(), 2);
    session.register(WeightedAverageFunction).unwrap();
    let plan = explain(&session, QUERY).await;
    assert!(
        plan.contains("mode=Partial") && plan.contains("mode=FinalPartitioned"),
        "two phases:\n{plan}"
    );
}

#[tokio::test]
async fn without_group_by_and_through_the_dataframe_api() {
    let session = partitioned_session("sales", &sales(), 2);
    session.register(WeightedAverageFunction).unwrap();
    let result = rows(&session, "SELECT weighted_avg(price, quantity) FROM sales").await;
    // (2 + 4 + 12 + 4 + 6 + 10 + 4) / 16
    assert_eq!(result, vec![vec![Value::Double(42.0 / 16.0)]]);

    let df = session
        .table("sales")
        .await
        .unwrap()
        .aggregate(
            vec![col("category")],
            vec![
                session
                    .call("weighted_avg", [col("price"), col("quantity")])
                    .unwrap()
                    .alias("avg"),
            ],
        )
        .unwrap()
        .sort(vec![col("category").sort(true, false)])
        .unwrap();
    let result = batches_to_rows(&df.collect().await.unwrap());
    assert_eq!(
        result,
        vec![
            vec![Value::from("coffee"), Value::Double(2.5)],
            vec![Value::from("tea"), Value::Double(2.75)]
        ]
    );
}

#[tokio::test]
async fn an_empty_group_reads_the_default_accumulator() {
    let session = partitioned_session("sales", &sales(), 1);
    session.register(WeightedAverageFunction).unwrap();
    let result = rows(
        &session,
        "SELECT weighted_avg(price, quantity) FROM sales WHERE price > 100",
    )
    .await;
    assert_eq!(result, vec![vec![Value::Null]]);
}
