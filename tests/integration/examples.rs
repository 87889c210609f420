//! Every scalar example of the seeds, run the way its documentation calls it.

use chrono::DateTime;
use udf_core::{Decimal, Row, Value};
use udf_examples::scalar::{
    complex_return::complex_return, configurable::ConfigurableFunction,
    efficient_string::EfficientStringFunction, hash::hash_function, literal::LiteralFunction,
    my_concat::MyConcatFunction, overloaded::OverloadedFunction, power::PowerFunction,
    string_hash::StringHashFunction, substring::SubstringFunction, substring::substring,
};
use udf_runtime::Session;

use crate::support::{column, column_types, error, rows, session_with, strs};

/// `"hello".hashCode()` in Java.
const HELLO_HASH: i32 = 99162322;

fn my_table() -> Session {
    session_with(
        "MyTable",
        &[
            column("myField", "STRING", strs(&[Some("flinkflinkflink")])),
            column("a", "INT", vec![Value::Int(1)]),
            column("b", "DOUBLE", vec![Value::Double(2.5)]),
        ],
    )
}

#[tokio::test]
async fn substring_function_positional_named_and_parameterized() {
    let session = my_table();
    session.register(substring).unwrap();
    session
        .register_as(
            "SubstringInclusive",
            SubstringFunction {
                end_inclusive: true,
            },
        )
        .unwrap();
    let result = rows(
        &session,
        "SELECT SubstringFunction(\"myField\", 5, 12) AS a, SubstringFunction(s => \"myField\", begin => 5, \"end\" => 12) AS b, \
                SubstringInclusive(\"myField\", 5, 12) AS c FROM MyTable",
    )
    .await;
    assert_eq!(
        result,
        vec![vec![
            Value::from("flinkfl"),
            Value::from("flinkfl"),
            Value::from("flinkfli")
        ]]
    );
}

#[tokio::test]
async fn my_concat_function_takes_every_column() {
    let session = my_table();
    session.register(MyConcatFunction).unwrap();
    let result = rows(
        &session,
        "SELECT MyConcatFunction(\"myField\", a, b) FROM MyTable",
    )
    .await;
    assert_eq!(result, vec![vec![Value::from("flinkflinkflink,1,2.5")]]);
}

#[tokio::test]
async fn overloaded_function_hints() {
    let session = Session::new();
    session.register(OverloadedFunction).unwrap();
    let result = rows(
        &session,
        "SELECT OverloadedFunction(CAST(1 AS BIGINT), CAST(2 AS BIGINT)) AS sum, OverloadedFunction(1.5, 2.25) AS dec, \
                OverloadedFunction(7) AS nested, OverloadedFunction('raw') AS raw",
    )
    .await;
    assert_eq!(
        result,
        vec![vec![
            Value::BigInt(3),
            Value::Decimal(Decimal::new(3750, 3)),
            Value::Row(Row::of([
                Value::from("7"),
                Value::TimestampLtz(DateTime::from_timestamp(7, 0).unwrap())
            ])),
            Value::Bytes(b"raw".to_vec()),
        ]]
    );
    let types = column_types(
        &session,
        "SELECT OverloadedFunction(1.5, 2.25) AS dec, OverloadedFunction(7) AS nested",
    )
    .await;
    assert_eq!(
        types,
        [
            "DECIMAL(12, 3) NOT NULL",
            "ROW<s STRING, t TIMESTAMP_LTZ(3)> NOT NULL"
        ]
    );
}

#[tokio::test]
async fn hash_function_accepts_any_type() {
    let session = Session::new();
    session.register(hash_function).unwrap();
    let result = rows(
        &session,
        "SELECT HashFunction('hello'), HashFunction(42), HashFunction(true)",
    )
    .await;
    assert_eq!(
        result,
        vec![vec![
            Value::Int(HELLO_HASH),
            Value::Int(42),
            Value::Int(1231)
        ]]
    );
}

#[tokio::test]
async fn literal_function_types_its_result_from_a_literal() {
    let session = Session::new();
    session.register(LiteralFunction).unwrap();
    let sql = "SELECT LiteralFunction('42', 'INT') AS i, LiteralFunction('1.5', 'DOUBLE') AS d, LiteralFunction('x', 'STRING') AS s";
    // STRING is nullable, as in the Java example.
    assert_eq!(
        column_types(&session, sql).await,
        ["INT NOT NULL", "DOUBLE NOT NULL", "STRING"]
    );
    let result = rows(&session, sql).await;
    assert_eq!(
        result,
        vec![vec![Value::Int(42), Value::Double(1.5), Value::from("x")]]
    );

    let message = error(
        &session,
        "SELECT LiteralFunction(s, t) FROM (VALUES ('1', 'INT')) AS v(s, t)",
    )
    .await;
    assert!(
        message
            .contains("invalid call to `literalfunction`: Literal expected for second argument."),
        "{message}"
    );
}

#[tokio::test]
async fn string_hash_and_power_overloads() {
    let session = Session::new();
    session.register(StringHashFunction).unwrap();
    session.register(PowerFunction).unwrap();
    let result = rows(
        &session,
        "SELECT string_hash('hello') AS h, string_hash('hello', 'user') AS p, power_func(2.0, 10.0) AS d, \
                power_func(CAST(2 AS BIGINT), CAST(10 AS BIGINT)) AS l",
    )
    .await;
    assert_eq!(
        result,
        vec![vec![
            Value::from(format!("hash_{HELLO_HASH}")),
            Value::from(format!("user_{HELLO_HASH}")),
            Value::Double(1024.0),
            Value::BigInt(1024),
        ]]
    );
}

#[tokio::test]
async fn complex_configurable_and_efficient_string_functions() {
    let session = Session::new();
    session.register(complex_return).unwrap();
    session
        .register_as(
            "with_prefix",
            ConfigurableFunction {
                prefix: "pre".into(),
            },
        )
        .unwrap();
    session.register(EfficientStringFunction).unwrap();
    let result = rows(
        &session,
        "SELECT complex_return('ab:3:0.5') AS c, with_prefix('x') AS p, efficient_string('') AS e1, \
                efficient_string('y') AS e2, efficient_string(5) AS e3",
    )
    .await;
    assert_eq!(
        result,
        vec![vec![
            Value::Row(Row::of([
                Value::from("ab"),
                Value::Int(3),
                Value::Double(0.5)
            ])),
            Value::from("pre_x"),
            Value::from(""),
            Value::from("processed_y"),
            Value::from("processed_5"),
        ]]
    );
    let message = error(
        &session,
        "SELECT complex_return(s) FROM (VALUES ('ab:3')) AS t(s)",
    )
    .await;
    assert!(
        message.contains("expected `name:count:ratio`, got `ab:3`"),
        "{message}"
    );
}
