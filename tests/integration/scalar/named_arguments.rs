//! Rule 4: positional first, then names in any order; omitted optional → NULL; names are
//! rejected for overloads and varargs; unknown or repeated names are errors.

use udf_core::Value;
use udf_examples::scalar::named_parameters::NamedParameterClass;
use udf_examples::scalar::sum::SumFunction;
use udf_runtime::Session;

use crate::support::{error, rows};

fn session() -> Session {
    let session = Session::new();
    session.register(NamedParameterClass).unwrap();
    session.register(SumFunction).unwrap();
    session
}

#[tokio::test]
async fn names_in_any_order_and_omitted_optionals() {
    let session = session();
    let result = rows(
        &session,
        "SELECT NamedParameterClass(param2 => 5, param1 => 'a'), \
                NamedParameterClass(param1 => 'b'), \
                NamedParameterClass('c', param2 => 7), \
                NamedParameterClass('d'), \
                NamedParameterClass(PARAM1 => 'e')",
    )
    .await;
    let expected: Vec<Value> = ["a, 5", "b, null", "c, 7", "d, null", "e, null"]
        .into_iter()
        .map(Value::from)
        .collect();
    assert_eq!(result, vec![expected]);
}

#[tokio::test]
async fn bad_names_are_planning_errors() {
    let session = session();
    let cases = [
        (
            "SELECT NamedParameterClass(param3 => 'a')",
            "has no argument named `param3`; its arguments are: param1, param2",
        ),
        (
            "SELECT NamedParameterClass(param1 => 'a', param1 => 'b')",
            "argument `param1` of `namedparameterclass` is given more than once",
        ),
        (
            "SELECT NamedParameterClass(param2 => 1)",
            "missing argument `param1` of `namedparameterclass`",
        ),
        (
            "SELECT NamedParameterClass(param1 => 'a', 1)",
            "positional argument 2 follows a named argument",
        ),
        (
            "SELECT NamedParameterClass(\"PARAM1\" => 'a')",
            "has no argument named `PARAM1`",
        ),
        (
            "SELECT SumFunction(a => 1, b => 2)",
            "does not accept named arguments because it has overloads",
        ),
    ];
    for (sql, expected) in cases {
        let message = error(&session, sql).await;
        assert!(message.contains(expected), "{sql}\n{message}");
    }
}
