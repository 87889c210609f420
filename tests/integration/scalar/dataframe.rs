//! The DataFrame path: calls by name, with named arguments, and of unregistered functions.

use udf_core::Value;
use udf_examples::scalar::my_concat::MyConcatFunction;
use udf_examples::scalar::substring::{SubstringFunction, substring};
use udf_runtime::prelude::*;

use crate::support::{batches_to_rows, column, session_with, strs};

#[tokio::test]
async fn calls_in_select() {
    let session = session_with(
        "MyTable",
        &[
            column("myField", "STRING", strs(&[Some("flinkflinkflink"), None])),
            column("n", "INT", vec![Value::Int(1), Value::Int(2)]),
        ],
    );
    session.register(substring).unwrap();
    let df = session
        .table("MyTable")
        .await
        .unwrap()
        .select(vec![
            session
                .call("SubstringFunction", [ident("myField"), lit(5), lit(12)])
                .unwrap()
                .alias("positional"),
            session
                .call_named(
                    "SubstringFunction",
                    [("end", lit(12)), ("s", ident("myField")), ("begin", lit(5))],
                )
                .unwrap()
                .alias("named"),
            session
                .call_inline(
                    SubstringFunction {
                        end_inclusive: true,
                    },
                    [ident("myField"), lit(5), lit(12)],
                )
                .unwrap()
                .alias("inline"),
            // `$("*")`: every column of the table as varargs.
            session
                .call_inline(MyConcatFunction, [ident("myField"), col("n")])
                .unwrap()
                .alias("concat"),
        ])
        .unwrap();
    let rows = batches_to_rows(&df.collect().await.unwrap());
    assert_eq!(
        rows,
        vec![
            vec![
                Value::from("flinkfl"),
                Value::from("flinkfl"),
                Value::from("flinkfli"),
                Value::from("flinkflinkflink,1")
            ],
            vec![Value::Null, Value::Null, Value::Null, Value::Null],
        ]
    );
    let unknown = session.call("nope", [lit(1)]).unwrap_err();
    assert!(
        unknown
            .to_string()
            .contains("no function named `nope` is registered"),
        "{unknown}"
    );
}
