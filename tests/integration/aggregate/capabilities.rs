//! A capability the query needs but the function lacks is a planning error naming both;
//! without `merge`, aggregations over several partitions run in one phase instead.

use udf_core::Value;
use udf_core::prelude::*;
use udf_examples::aggregate::efficient_aggregate::EfficientAggregateFunction;
use udf_examples::aggregate::weighted_avg::WeightedAvg;

use super::sales;
use crate::support::{column, error, explain, partitioned_session, rows, session_with};

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

#[derive(Clone, Default)]
struct Fragile;

#[aggregate_function]
impl Fragile {
    fn accumulate(acc: &mut i64, value: i64) -> Result<()> {
        if value == 13 {
            bail!("unlucky value");
        }
        if value == 7 {
            panic!("cannot take {value}");
        }
        *acc += value;
        Ok(())
    }

    fn get_value(acc: &i64) -> i64 {
        *acc
    }
}

#[tokio::test]
async fn errors_and_panics_name_the_function_and_row() {
    let session = session_with(
        "t",
        &[column(
            "v",
            "BIGINT",
            vec![Value::BigInt(1), Value::BigInt(13)],
        )],
    );
    session.register(Fragile).unwrap();
    let message = error(&session, "SELECT fragile(v) FROM t").await;
    assert!(
        message.contains("aggregate function `fragile` failed: unlucky value (row 1 of the batch, arguments: value => 13)"),
        "{message}"
    );
    let session = session_with("t", &[column("v", "BIGINT", vec![Value::BigInt(7)])]);
    session.register(Fragile).unwrap();
    let message = error(&session, "SELECT v % 2, fragile(v) FROM t GROUP BY v % 2").await;
    assert!(
        message.contains("aggregate function `fragile` panicked: cannot take 7 (at tests/")
            && message.contains(") (row 0 of the batch, arguments: value => 7)"),
        "{message}"
    );
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Tally {
    sum: i64,
    rows: i64,
}

/// A mean that refuses to divide by nothing: a group whose values are all NULL fails in
/// `get_value`.
#[derive(Clone, Default)]
struct StrictMean;

#[aggregate_function]
impl StrictMean {
    fn accumulate(acc: &mut Tally, value: Option<i64>) {
        if let Some(value) = value {
            acc.sum += value;
            acc.rows += 1;
        }
    }

    fn get_value(acc: &Tally) -> Result<i64> {
        if acc.rows == 0 {
            bail!("no rows to average");
        }
        Ok(acc.sum / acc.rows)
    }
}

#[tokio::test]
async fn a_failing_get_value_shows_the_accumulator() {
    let session = session_with(
        "t",
        &[
            column("k", "INT", [1, 1, 2].map(Value::Int).to_vec()),
            column(
                "v",
                "BIGINT",
                vec![Value::BigInt(4), Value::BigInt(6), Value::Null],
            ),
        ],
    );
    session.register(StrictMean).unwrap();
    let message = error(&session, "SELECT k, strictmean(v) FROM t GROUP BY k").await;
    assert!(
        message.contains("aggregate function `strictmean` failed in get_value: no rows to average (accumulator: {sum: 0, rows: 0})"),
        "{message}"
    );
}
