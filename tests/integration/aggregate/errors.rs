//! A failing aggregate call names the function and where it failed: the row and its
//! arguments while folding rows in; the group's key and accumulator in `merge` and
//! `get_value`, in one phase or two, also after groups were emitted early.

use udf_core::Value;
use udf_core::prelude::*;
use udf_runtime::Session;

use crate::support::{column, error, explain, partitioned_session, rows, session_with, strs};

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
            && message.contains(") (row 0 of the batch, arguments: value => 7) (group key: 1)"),
        "{message}"
    );
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Tally {
    sum: i64,
    rows: i64,
}

/// A mean that refuses to divide by nothing (a group whose values are all NULL fails in
/// `get_value`), panics on a sum of 42, and whose partial sums must not meet at 99 (`merge`
/// fails) or 98 (`merge` panics).
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

    fn merge(acc: &mut Tally, other: &Tally) -> Result<()> {
        match acc.sum + other.sum {
            99 if acc.rows > 0 => bail!("the sums meet at 99"),
            98 if acc.rows > 0 => panic!("98 again"),
            _ => {}
        }
        acc.sum += other.sum;
        acc.rows += other.rows;
        Ok(())
    }

    fn get_value(acc: &Tally) -> Result<i64> {
        if acc.rows == 0 {
            bail!("no rows to average");
        }
        if acc.sum == 42 {
            panic!("forty-two");
        }
        Ok(acc.sum / acc.rows)
    }
}

/// `t(name, k, v)`: groups (a, 1) with 4 and 6, (b, 2) with `values` for v; over two
/// partitions each group has a row in each.
fn two_groups(values: [Option<i64>; 2]) -> Vec<crate::support::Column> {
    let v = |x: Option<i64>| x.map_or(Value::Null, Value::BigInt);
    vec![
        column(
            "name",
            "STRING",
            strs(&[Some("a"), Some("a"), Some("b"), Some("b")]),
        ),
        column("k", "BIGINT", [1, 1, 2, 2].map(Value::BigInt).to_vec()),
        column(
            "v",
            "BIGINT",
            vec![
                Value::BigInt(4),
                Value::BigInt(6),
                v(values[0]),
                v(values[1]),
            ],
        ),
    ]
}

/// One partition (one phase) and two (a partial and a final aggregation, which gets the
/// keys from the partial one).
fn sessions(columns: &[crate::support::Column]) -> [Session; 2] {
    [1, 2].map(|partitions| {
        let session = partitioned_session("t", columns, partitions);
        session.register(StrictMean).unwrap();
        session
    })
}

const BY_NAME_AND_K: &str = "SELECT name, k, strictmean(v) FROM t GROUP BY name, k";

#[tokio::test]
async fn a_failing_get_value_names_the_group_key_and_accumulator() {
    for session in sessions(&two_groups([None, None])) {
        let message = error(&session, BY_NAME_AND_K).await;
        assert!(
            message.contains("aggregate function `strictmean` failed in get_value: no rows to average (accumulator: {sum: 0, rows: 0}) (group key: b, 2)"),
            "{message}"
        );
    }
    let two_phases = &sessions(&two_groups([None, None]))[1];
    let plan = explain(two_phases, BY_NAME_AND_K).await;
    assert!(
        plan.contains("mode=Partial") && plan.contains("mode=FinalPartitioned"),
        "{plan}"
    );
    // The keys are not shown as arguments: both phases read as the query wrote the call.
    assert_eq!(plan.matches("aggr=[strictmean(t.v)]").count(), 2, "{plan}");
}

#[tokio::test]
async fn a_panicking_get_value_names_the_group_key_and_accumulator() {
    for session in sessions(&two_groups([Some(40), Some(2)])) {
        let message = error(&session, BY_NAME_AND_K).await;
        assert!(
            message.contains(
                "aggregate function `strictmean` panicked in get_value: forty-two (at tests/"
            ) && message.contains(") (accumulator: {sum: 42, rows: 2}) (group key: b, 2)"),
            "{message}"
        );
    }
}

#[tokio::test]
async fn merge_failures_name_the_group_key_and_accumulator() {
    // Two partitions: the rows of (b, 2) are split between them, so their sums meet in merge.
    let session = &sessions(&two_groups([Some(50), Some(49)]))[1];
    let message = error(session, BY_NAME_AND_K).await;
    assert!(
        message.contains("aggregate function `strictmean` failed in merge: the sums meet at 99 (accumulator: {sum: ")
            && message.contains(", rows: 1}) (group key: b, 2)"),
        "{message}"
    );
    let session = &sessions(&two_groups([Some(50), Some(48)]))[1];
    let message = error(session, BY_NAME_AND_K).await;
    assert!(
        message.contains("aggregate function `strictmean` panicked in merge: 98 again (at tests/")
            && message.contains(", rows: 1}) (group key: b, 2)"),
        "{message}"
    );
}

#[tokio::test]
async fn group_keys_leave_the_results_as_they_were() {
    // Two calls of ours around a built-in one, in both phases: each call's state columns,
    // now with the keys, stay where the final aggregation reads them.
    let sql = "SELECT name, k, strictmean(v), COUNT(v), strictmean(v * 2) FROM t GROUP BY name, k ORDER BY name";
    for session in sessions(&two_groups([Some(1), Some(3)])) {
        assert_eq!(
            rows(&session, sql).await,
            vec![
                vec![
                    Value::String("a".into()),
                    Value::BigInt(1),
                    Value::BigInt(5),
                    Value::BigInt(2),
                    Value::BigInt(10),
                ],
                vec![
                    Value::String("b".into()),
                    Value::BigInt(2),
                    Value::BigInt(2),
                    Value::BigInt(2),
                    Value::BigInt(4),
                ],
            ]
        );
    }
}

#[tokio::test]
async fn groups_emitted_early_do_not_shift_the_keys_of_later_ones() {
    // Sorted by k in three batches (1 1 2 | 2 3 3 | 4 4 5): groups 1 and 2 are emitted
    // before group 4 fails, and group 4 is the aggregation's group 1 or 2 by then.
    let keys = [1, 1, 2, 2, 3, 3, 4, 4, 5];
    let values = [1, 2, 3, 4, 5, 6, 0, 0, 9].map(|v| {
        if v == 0 {
            Value::Null
        } else {
            Value::BigInt(v)
        }
    });
    let session = super::sorted_session(keys, values);
    session.register(StrictMean).unwrap();
    let sql = "SELECT k, strictmean(v) FROM sorted GROUP BY k";
    let plan = explain(&session, sql).await;
    assert!(plan.contains("ordering_mode=Sorted"), "{plan}");
    let message = error(&session, sql).await;
    assert!(
        message.contains("failed in get_value: no rows to average (accumulator: {sum: 0, rows: 0}) (group key: 4)"),
        "{message}"
    );
}
