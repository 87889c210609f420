//! Registering under default and chosen names, parameterized instances, dropping, listing.

use udf_core::Value;
use udf_examples::scalar::substring::{SubstringFunction, substring};
use udf_runtime::Session;

use crate::support::{error, rows};

#[tokio::test]
async fn register_instances_under_names_and_drop_them() {
    let session = Session::new();
    session.register(substring).unwrap();
    session
        .register_as(
            "SubstringExclusive",
            SubstringFunction {
                end_inclusive: false,
            },
        )
        .unwrap();
    session
        .register_as(
            "SubstringInclusive",
            SubstringFunction {
                end_inclusive: true,
            },
        )
        .unwrap();

    let sql = "SELECT SubstringFunction('flink', 1, 3) AS a, SubstringExclusive('flink', 1, 3) AS b, \
               substringinclusive('flink', 1, 3) AS c";
    assert_eq!(
        rows(&session, sql).await,
        vec![vec![
            Value::from("li"),
            Value::from("li"),
            Value::from("lin")
        ]]
    );

    let duplicate = session
        .register_as(
            "SUBSTRINGFUNCTION",
            SubstringFunction {
                end_inclusive: true,
            },
        )
        .unwrap_err();
    assert!(
        duplicate
            .to_string()
            .contains("a function named `substringfunction` is already registered"),
        "{duplicate}"
    );
    let invalid = session.register_as("two words", substring).unwrap_err();
    assert!(
        invalid.to_string().contains("is not a valid function name"),
        "{invalid}"
    );
    // SUBSTRING(...) is SQL syntax: a function of that name could never be called.
    let syntax = session.register_as("Substring", substring).unwrap_err();
    assert!(
        syntax
            .to_string()
            .contains("SQL parses `SUBSTRING(...)` as its own syntax"),
        "{syntax}"
    );

    assert!(session.drop_function("SubstringInclusive"));
    assert!(!session.drop_function("SubstringInclusive"));
    let names: Vec<String> = session.functions().into_iter().map(|f| f.name).collect();
    assert_eq!(names, ["substringexclusive", "substringfunction"]);
    let message = error(&session, "SELECT substringinclusive('flink', 1, 3)").await;
    assert!(
        message.contains("Invalid function 'substringinclusive'"),
        "{message}"
    );
}
