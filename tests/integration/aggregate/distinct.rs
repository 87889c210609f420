//! `f(DISTINCT ...)`: each distinct argument row is folded once, in GROUP BY (one and two
//! phases), whole-input aggregates and OVER windows (where rows also leave the set).

use udf_core::Value;
use udf_examples::aggregate::efficient_aggregate::EfficientAggregateFunction;
use udf_examples::aggregate::weighted_average::WeightedAverageFunction;

use crate::support::{Column, column, partitioned_session, rows, strs};

/// `purchases(id, category, price, quantity)` with repeated (price, quantity) pairs.
fn purchases() -> Vec<Column> {
    let doubles = |v: &[Option<f64>]| {
        v.iter()
            .map(|x| x.map_or(Value::Null, Value::Double))
            .collect()
    };
    let tea = Some("tea");
    let coffee = Some("coffee");
    vec![
        column("id", "INT", (1..=10).map(Value::Int).collect()),
        column(
            "category",
            "STRING",
            strs(&[
                tea, tea, tea, tea, coffee, coffee, coffee, coffee, coffee, coffee,
            ]),
        ),
        column(
            "price",
            "DOUBLE",
            doubles(&[
                Some(2.0),
                Some(2.0),
                Some(4.0),
                Some(2.0),
                Some(3.0),
                Some(3.0),
                Some(3.0),
                Some(5.0),
                None,
                None,
            ]),
        ),
        column(
            "quantity",
            "DOUBLE",
            doubles(&[
                Some(1.0),
                Some(1.0),
                Some(1.0),
                Some(3.0),
                Some(2.0),
                Some(2.0),
                Some(2.0),
                Some(2.0),
                Some(2.0),
                Some(2.0),
            ]),
        ),
    ]
}

fn doubles(values: &[f64]) -> Vec<Value> {
    values.iter().copied().map(Value::Double).collect()
}

#[tokio::test]
async fn group_by_folds_each_distinct_argument_row_once() {
    // tea: distinct (2,1), (4,1), (2,3) → (2 + 4 + 6) / 5; all rows → (2 + 2 + 4 + 6) / 6.
    // coffee: distinct (3,2), (5,2), (NULL,2) skipped → (6 + 10) / 4; all → (18 + 10) / 8.
    // efficient_avg(DISTINCT price): tea {2, 4} → 3, coffee {3, 5} → 4.
    for partitions in [1, 2, 3] {
        let session = partitioned_session("purchases", &purchases(), partitions);
        session.register(WeightedAverageFunction).unwrap();
        session.register(EfficientAggregateFunction).unwrap();
        let result = rows(
            &session,
            "SELECT weighted_avg(DISTINCT price, quantity), weighted_avg(price, quantity), \
                    efficient_avg(DISTINCT price) \
             FROM purchases GROUP BY category ORDER BY category",
        )
        .await;
        assert_eq!(
            result,
            vec![
                doubles(&[16.0 / 4.0, 28.0 / 8.0, 4.0]),
                doubles(&[12.0 / 5.0, 14.0 / 6.0, 3.0]),
            ],
            "{partitions} partition(s)"
        );
    }
}

#[tokio::test]
async fn only_distinct_calls_in_a_query() {
    for partitions in [1, 2] {
        let session = partitioned_session("purchases", &purchases(), partitions);
        session.register(EfficientAggregateFunction).unwrap();
        session.register(WeightedAverageFunction).unwrap();
        let single = rows(
            &session,
            "SELECT category, efficient_avg(DISTINCT price) FROM purchases \
             GROUP BY category ORDER BY category",
        )
        .await;
        assert_eq!(
            single,
            vec![
                vec![Value::from("coffee"), Value::Double(4.0)],
                vec![Value::from("tea"), Value::Double(3.0)],
            ]
        );
        // Whole input: distinct (2,1), (4,1), (2,3), (3,2), (5,2) → 28 / 9.
        let whole = rows(
            &session,
            "SELECT weighted_avg(DISTINCT price, quantity) FROM purchases",
        )
        .await;
        assert_eq!(
            whole,
            vec![doubles(&[28.0 / 9.0])],
            "{partitions} partition(s)"
        );
    }
}

#[tokio::test]
async fn a_bounded_frame_retracts_a_row_when_its_last_copy_leaves() {
    let session = partitioned_session("purchases", &purchases(), 2);
    session.register(WeightedAverageFunction).unwrap();
    let result = rows(
        &session,
        "SELECT id, weighted_avg(DISTINCT price, quantity) OVER \
             (PARTITION BY category ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) \
         FROM purchases WHERE category = 'tea' ORDER BY id",
    )
    .await;
    // Frames: {(2,1)}, {(2,1),(2,1)}, {(2,1),(4,1)}, {(4,1),(2,3)}.
    assert_eq!(
        result,
        vec![
            vec![Value::Int(1), Value::Double(2.0)],
            vec![Value::Int(2), Value::Double(2.0)],
            vec![Value::Int(3), Value::Double(3.0)],
            vec![Value::Int(4), Value::Double(10.0 / 4.0)],
        ]
    );
}
