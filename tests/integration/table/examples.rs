//! The table function examples of Flink's documentation, in SQL and with the DataFrame API.

use udf_core::Value;
use udf_examples::table::generate_series::GenerateSeriesFunction;
use udf_examples::table::overloaded::{HintedOverloadedFunction, OverloadedFunction};
use udf_examples::table::split::split_function;
use udf_examples::table::split_string::SplitStringFunction;
use udf_runtime::prelude::*;

use super::{collect, my_session};
use crate::row;
use crate::support::{column, column_types, rows, session_with, strs};

/// "Hello World" gives two words; "a b  c" four (Java keeps the empty word between two
/// spaces); "" one empty word. The NULL row is not split: the parameter is `&str`, so the
/// function is not called for it (the Java version would fail on it).
fn split_rows() -> Vec<Vec<Value>> {
    vec![
        row!["Hello World", "Hello", 5],
        row!["Hello World", "World", 5],
        row!["a b  c", "a", 1],
        row!["a b  c", "b", 1],
        row!["a b  c", "", 0],
        row!["a b  c", "c", 1],
        row!["", "", 0],
    ]
}

#[tokio::test]
async fn split_function_in_sql() {
    let session = my_session();
    session.register(split_function).unwrap();
    let comma = rows(
        &session,
        "SELECT \"myField\", word, length FROM MyTable, LATERAL TABLE(SplitFunction(\"myField\"))",
    )
    .await;
    assert_eq!(comma, split_rows());

    let left = rows(
        &session,
        "SELECT \"myField\", word, length FROM MyTable LEFT JOIN LATERAL TABLE(SplitFunction(\"myField\")) ON TRUE",
    )
    .await;
    let mut expected = split_rows();
    expected.push(row![Value::Null, Value::Null, Value::Null]);
    assert_eq!(left, expected);
}

#[tokio::test]
async fn split_function_with_the_dataframe_api() {
    let session = my_session();
    session.register(split_function).unwrap();
    let table = || async { session.table("MyTable").await.unwrap() };
    let select = |df: DataFrame, names: [&str; 3]| {
        df.select(names.iter().map(|n| ident(*n)).collect::<Vec<Expr>>())
            .unwrap()
    };

    // Registered, inner and left outer.
    let call = || {
        session
            .table_function("SplitFunction", [ident("myField")])
            .unwrap()
    };
    let inner = table().await.join_lateral(call()).unwrap();
    assert_eq!(
        collect(select(inner, ["myField", "word", "length"])).await,
        split_rows()
    );
    let left = table().await.left_outer_join_lateral(call()).unwrap();
    let mut expected = split_rows();
    expected.push(row![Value::Null, Value::Null, Value::Null]);
    assert_eq!(
        collect(select(left, ["myField", "word", "length"])).await,
        expected
    );

    // Inline, with the function's columns renamed.
    let renamed = table()
        .await
        .left_outer_join_lateral(
            session
                .table_function_inline(split_function, [ident("myField")])
                .unwrap()
                .alias(["newWord", "newLength"]),
        )
        .unwrap();
    assert_eq!(
        collect(select(renamed, ["myField", "newWord", "newLength"])).await,
        expected
    );
}

fn source_table() -> Vec<crate::support::Column> {
    vec![
        column(
            "id",
            "INT",
            vec![Value::Int(1), Value::Int(2), Value::Int(3)],
        ),
        column("name", "STRING", strs(&[Some("x"), Some("y"), Some("z")])),
        column(
            "tags",
            "STRING",
            strs(&[Some("red, green,blue"), None, Some("solo,,")]),
        ),
    ]
}

/// The API digest's `split_string`: trimmed pieces with their positions; Java's `split`
/// drops trailing empty pieces ("solo,," gives one).
#[tokio::test]
async fn split_string_in_sql_and_with_the_dataframe_api() {
    let session = session_with("source_table", &source_table());
    session.register(SplitStringFunction).unwrap();
    let expected = vec![
        row![1, "x", "red", 0],
        row![1, "x", "green", 1],
        row![1, "x", "blue", 2],
        row![3, "z", "solo", 0],
    ];
    let sql = rows(
        &session,
        "SELECT t.id, t.name, s.word, s.position \
         FROM source_table t, LATERAL TABLE(split_string(t.tags, ',')) AS s(word, position)",
    )
    .await;
    assert_eq!(sql, expected);

    let df = session
        .table("source_table")
        .await
        .unwrap()
        .join_lateral(
            session
                .table_function("split_string", [col("tags"), lit(",")])
                .unwrap(),
        )
        .unwrap()
        .select(vec![
            col("id"),
            col("name"),
            col("f0").alias("word"),
            col("f1").alias("position"),
        ])
        .unwrap();
    assert_eq!(collect(df).await, expected);
}

#[tokio::test]
async fn generate_series_with_and_without_a_step() {
    let session = session_with(
        "bounds",
        &[
            column("lo", "INT", vec![Value::Int(1), Value::Int(5), Value::Null]),
            column(
                "hi",
                "INT",
                vec![Value::Int(3), Value::Int(4), Value::Int(2)],
            ),
        ],
    );
    session.register(GenerateSeriesFunction).unwrap();
    let series = |sql: &'static str| {
        let session = &session;
        async move {
            rows(session, sql)
                .await
                .into_iter()
                .map(|mut r| r.pop().unwrap())
                .collect::<Vec<_>>()
        }
    };
    let ints = |v: &[i32]| v.iter().map(|i| Value::Int(*i)).collect::<Vec<_>>();
    assert_eq!(
        series("SELECT * FROM TABLE(generate_series_function(1, 5))").await,
        ints(&[1, 2, 3, 4, 5])
    );
    assert_eq!(
        series("SELECT * FROM TABLE(generate_series_function(10, 1, -3))").await,
        ints(&[10, 7, 4, 1])
    );
    assert_eq!(
        series("SELECT * FROM TABLE(generate_series_function(1, 5, 0))").await,
        ints(&[])
    );
    // Per row: (1, 3) → 1 2 3; (5, 4) → nothing; (NULL, 2) → nothing.
    assert_eq!(
        series("SELECT f0 FROM bounds, LATERAL TABLE(generate_series_function(lo, hi))").await,
        ints(&[1, 2, 3])
    );
    assert_eq!(
        column_types(
            &session,
            "SELECT * FROM TABLE(generate_series_function(1, 2))"
        )
        .await,
        ["INT NOT NULL"]
    );
}

#[tokio::test]
async fn overloads_with_one_row_type_and_with_hinted_types() {
    let session = Session::new();
    session.register(OverloadedFunction).unwrap();
    session.register(HintedOverloadedFunction).unwrap();
    assert_eq!(
        rows(&session, "SELECT * FROM TABLE(OverloadedFunction(1, 2))").await,
        vec![row!["Sum", 3]]
    );
    assert_eq!(
        rows(&session, "SELECT s, i FROM TABLE(OverloadedFunction())").await,
        vec![row!["Empty args", -1]]
    );
    let cases: [(&str, Value, &str); 3] = [
        (
            "HintedOverloadedFunction(1, 2)",
            Value::Int(1),
            "INT NOT NULL",
        ),
        (
            "HintedOverloadedFunction(CAST(7 AS BIGINT), CAST(8 AS BIGINT))",
            Value::BigInt(7),
            "BIGINT NOT NULL",
        ),
        (
            "HintedOverloadedFunction()",
            Value::Boolean(false),
            "BOOLEAN NOT NULL",
        ),
    ];
    for (call, value, ty) in cases {
        let sql = format!("SELECT f0 FROM TABLE({call})");
        assert_eq!(rows(&session, &sql).await, vec![vec![value]], "{call}");
        assert_eq!(column_types(&session, &sql).await, [ty], "{call}");
    }
}
