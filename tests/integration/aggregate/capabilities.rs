//! A capability the query needs but the function lacks is a planning error naming both;
//! without `merge`, aggregations over several partitions run in one phase instead.

use udf_core::Value;
use udf_examples::aggregate::efficient_aggregate::EfficientAggregateFunction;
use udf_examples::aggregate::weighted_avg::WeightedAvg;

use super::sales;
use crate::support::{column, error, explain, partitioned_session, rows};

#[tokio::test]
async fn bounded_frames_need_retract() {
    let session = partitioned_session("sales", &sales(), 1);
    session.register(EfficientAggregateFunction).unwrap();
    let message = error(
        &session,
        "SELECT efficient_avg(price) OVER (ORDER BY quantity ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM sales",
    )
    .await;
    assert!(
        message.contains("aggregate function `efficient_avg` has no `retract`, which the window frame `ROWS BETWEEN 2 PRECEDING AND CURRENT ROW` needs"),
        "{message}"
    );
}

fn orders() -> Vec<crate::support::Column> {
    vec![
        column(
            "myField",
            "BIGINT",
            (0..6).map(|i| Value::BigInt(i % 2)).collect(),
        ),
        column("weight", "INT", (0..6).map(|i| Value::Int(i + 1)).collect()),
    ]
}

/// Without `merge` there are no partial aggregates to combine: over several partitions the
/// rows are hash-partitioned by the group keys (or gathered, without GROUP BY) and aggregated
/// in one phase, as Flink skips local-global aggregation for such functions.
#[tokio::test]
async fn without_merge_the_aggregation_runs_in_one_phase() {
    // weights 1..6: group 0 has weights 1, 3, 5; group 1 has 2, 4, 6.
    // WeightedAvg: sum(myField * weight) / sum(weight) in integers: 0 and 12 / 12 = 1.
    let grouped = "SELECT \"myField\", WeightedAvg(\"myField\", weight) FROM MyTable GROUP BY \"myField\" ORDER BY \"myField\"";
    // Whole input, the weights averaged by myField (0 or 1): (2 + 4 + 6) / 3 = 4.
    let whole = "SELECT WeightedAvg(weight, CAST(\"myField\" AS INT)) FROM MyTable";
    for partitions in [1, 2, 3] {
        let session = partitioned_session("MyTable", &orders(), partitions);
        session.register(WeightedAvg).unwrap();
        assert_eq!(
            rows(&session, grouped).await,
            vec![
                vec![Value::BigInt(0), Value::BigInt(0)],
                vec![Value::BigInt(1), Value::BigInt(1)]
            ],
            "{partitions} partition(s)"
        );
        assert_eq!(
            rows(&session, whole).await,
            vec![vec![Value::BigInt(4)]],
            "{partitions} partition(s)"
        );
    }
    let session = partitioned_session("MyTable", &orders(), 2);
    session.register(WeightedAvg).unwrap();
    let plan = explain(&session, grouped).await;
    assert!(
        plan.contains("AggregateExec: mode=SinglePartitioned")
            && plan.contains("RepartitionExec: partitioning=Hash")
            && !plan.contains("mode=Partial"),
        "{plan}"
    );
    let plan = explain(&session, whole).await;
    assert!(
        plan.contains("AggregateExec: mode=Single,")
            && plan.contains("CoalescePartitionsExec")
            && !plan.contains("mode=Partial"),
        "{plan}"
    );
}
