//! Cases recorded on Apache Flink 2.3 (`tests/conformance/*.json`), run against the same
//! input with the functions ported to Rust.

mod scalar;

use serde::Deserialize;
use serde_json::Value as Json;
use udf_core::Value;
use udf_core::types::{DataType, TypeKind};
use udf_runtime::Session;

use crate::support::{self, Column};

#[derive(Deserialize)]
pub struct Case {
    pub case: String,
    pub query: String,
    pub input: Input,
    pub output: Output,
    pub error: Option<String>,
}

#[derive(Deserialize)]
pub struct Input {
    pub view_name: String,
    pub schema: Vec<String>,
    pub rows: Vec<Vec<Json>>,
}

#[derive(Deserialize)]
pub struct Output {
    pub schema: Vec<String>,
    pub order: String,
    pub rows: Vec<Vec<Json>>,
}

pub fn load(name: &str) -> Case {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("conformance")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `"a BIGINT NOT NULL"` → (`a`, BIGINT NOT NULL).
fn schema_entry(entry: &str) -> (String, DataType) {
    let (name, ty) = entry.split_once(' ').expect("`name TYPE`");
    (
        name.to_owned(),
        ty.parse().unwrap_or_else(|e| panic!("{entry}: {e}")),
    )
}

/// A JSON cell as a value of the column's type.
fn value(json: &Json, data_type: &DataType) -> Value {
    if json.is_null() {
        return Value::Null;
    }
    let int = || {
        json.as_i64()
            .unwrap_or_else(|| panic!("{json} is not an integer"))
    };
    match &data_type.kind {
        TypeKind::Int => Value::Int(int() as i32),
        TypeKind::BigInt => Value::BigInt(int()),
        TypeKind::Double => Value::Double(json.as_f64().expect("a number")),
        TypeKind::VarChar { .. } | TypeKind::Char { .. } => {
            Value::String(json.as_str().expect("a string").to_owned())
        }
        other => panic!("conformance values of type {other} are not supported yet"),
    }
}

/// The case's input as a table in a fresh session.
pub fn session(case: &Case) -> Session {
    let columns: Vec<Column> = case
        .input
        .schema
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let (name, data_type) = schema_entry(entry);
            let values = case
                .input
                .rows
                .iter()
                .map(|row| {
                    assert_eq!(
                        row[0], "+I",
                        "{}: only insert-only input is supported",
                        case.case
                    );
                    value(&row[i + 1], &data_type)
                })
                .collect();
            Column {
                name,
                data_type,
                values,
            }
        })
        .collect();
    support::session_with(&case.input.view_name, &columns)
}

/// Runs the case's query in `session` and compares columns (names, types ignoring
/// nullability) and rows (kinds and values, in the case's order) with Flink's output.
pub async fn check(case: &Case, session: &Session) {
    assert!(
        case.error.is_none(),
        "{}: error cases are checked by their own tests",
        case.case
    );
    let df = session
        .sql(&case.query)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", case.case));
    let schema = df.schema().clone();
    let batches = df
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", case.case));

    let expected_columns: Vec<(String, DataType)> =
        case.output.schema.iter().map(|e| schema_entry(e)).collect();
    let actual_columns: Vec<(String, DataType)> = schema
        .fields()
        .iter()
        .map(|f| {
            (
                f.name().clone(),
                DataType::from_arrow_field(f).expect("SQL type"),
            )
        })
        .collect();
    assert_eq!(
        actual_columns.len(),
        expected_columns.len(),
        "{}: column count",
        case.case
    );
    for ((name, ty), (expected_name, expected_ty)) in actual_columns.iter().zip(&expected_columns) {
        assert_eq!(name, expected_name, "{}: column names", case.case);
        assert!(
            ty.equals_ignoring_nullability(expected_ty),
            "{}: column `{name}` is {ty}, Flink has {expected_ty}",
            case.case
        );
    }

    let expected: Vec<Vec<Value>> = case
        .output
        .rows
        .iter()
        .map(|row| {
            assert_eq!(
                row[0], "+I",
                "{}: this runner compares insert-only output",
                case.case
            );
            row[1..]
                .iter()
                .zip(&expected_columns)
                .map(|(json, (_, ty))| value(json, ty))
                .collect()
        })
        .collect();
    let actual = support::batches_to_rows(&batches);
    assert_eq!(
        case.output.order, "total",
        "{}: only totally ordered output is compared here",
        case.case
    );
    assert_eq!(actual, expected, "{}", case.case);
}
