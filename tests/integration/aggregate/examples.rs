//! The seed's aggregate examples, run the way their documentation calls them.

use udf_core::Value;
use udf_examples::aggregate::string_concat::StringConcatFunction;

use crate::support::{column, partitioned_session, rows, strs};

#[tokio::test]
async fn string_concat_joins_values_in_input_order() {
    let session = partitioned_session(
        "words",
        &[
            column(
                "k",
                "INT",
                vec![Value::Int(1), Value::Int(1), Value::Int(2), Value::Int(1)],
            ),
            column(
                "w",
                "STRING",
                strs(&[Some("a"), None, Some("c"), Some("b")]),
            ),
        ],
        1,
    );
    session.register(StringConcatFunction).unwrap();
    let result = rows(
        &session,
        "SELECT k, string_concat(w, '-') AS joined, string_concat(w, NULL) AS glued FROM words GROUP BY k ORDER BY k",
    )
    .await;
    assert_eq!(
        result,
        vec![
            vec![Value::Int(1), Value::from("a-b"), Value::from("ab")],
            vec![Value::Int(2), Value::from("c"), Value::from("c")],
        ]
    );
}

/// The guide's Table API form: `groupBy(myField).select(myField, call("WeightedAvg", myField, weight))`.
#[tokio::test]
async fn weighted_avg_through_the_dataframe_api() {
    use udf_examples::aggregate::weighted_avg::WeightedAvg;
    use udf_runtime::prelude::*;

    let session = partitioned_session(
        "MyTable",
        &[
            column(
                "myField",
                "BIGINT",
                vec![Value::BigInt(10), Value::BigInt(20), Value::BigInt(10)],
            ),
            column(
                "weight",
                "INT",
                vec![Value::Int(1), Value::Int(3), Value::Int(3)],
            ),
        ],
        1,
    );
    session.register(WeightedAvg).unwrap();
    let df = session
        .table("MyTable")
        .await
        .unwrap()
        .aggregate(
            vec![ident("myField")],
            vec![
                session
                    .call("WeightedAvg", [ident("myField"), ident("weight")])
                    .unwrap(),
            ],
        )
        .unwrap()
        .sort(vec![ident("myField").sort(true, false)])
        .unwrap();
    let result = crate::support::batches_to_rows(&df.collect().await.unwrap());
    assert_eq!(
        result,
        vec![
            vec![Value::BigInt(10), Value::BigInt(10)],
            vec![Value::BigInt(20), Value::BigInt(20)]
        ]
    );
}
