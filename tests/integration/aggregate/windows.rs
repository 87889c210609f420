//! OVER windows (rule 15 of docs/semantics.md): unbounded frames accumulate only; bounded frames retract rows
//! leaving the frame.

use udf_core::Value;
use udf_examples::aggregate::efficient_aggregate::EfficientAggregateFunction;
use udf_examples::aggregate::weighted_average::WeightedAverageFunction;

use super::sales;
use crate::support::{partitioned_session, rows};

#[tokio::test]
async fn unbounded_and_bounded_frames() {
    let session = partitioned_session("sales", &sales(), 2);
    session.register(WeightedAverageFunction).unwrap();
    session.register(EfficientAggregateFunction).unwrap();
    let result = rows(
        &session,
        "SELECT price, efficient_avg(price) OVER (ORDER BY quantity, price ROWS UNBOUNDED PRECEDING) AS running, \
                weighted_avg(price, 1.0) OVER (ORDER BY quantity, price ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS pair \
         FROM sales WHERE category = 'tea' ORDER BY quantity, price",
    )
    .await;
    // tea rows ordered by (quantity, price): (1, 2.0), (1, 4.0), (2, 6.0), (4, 1.0)
    assert_eq!(
        result,
        vec![
            vec![Value::Double(2.0), Value::Double(2.0), Value::Double(2.0)],
            vec![Value::Double(4.0), Value::Double(3.0), Value::Double(3.0)],
            vec![Value::Double(6.0), Value::Double(4.0), Value::Double(5.0)],
            vec![
                Value::Double(1.0),
                Value::Double(13.0 / 4.0),
                Value::Double(3.5)
            ],
        ]
    );
}
