//! Cases recorded on Apache Flink 2.3 (`tests/conformance/*.json`), run against the same
//! input with the functions ported to Rust.

mod aggregate;
mod ptf;
mod scalar;
pub(crate) mod streaming;
mod table;

use serde::Deserialize;
use serde_json::Value as Json;
use udf_core::Value;
use udf_core::types::{DataType, TypeKind};
use udf_runtime::Session;
use udf_runtime::datafusion::prelude::SessionConfig;

use crate::support::{self, Backend, Column, use_backend};

#[derive(Deserialize)]
pub struct Case {
    pub case: String,
    /// Flink's parallelism: the number of virtual processors of a PTF.
    pub parallelism: usize,
    pub query: String,
    pub input: Input,
    pub output: Output,
    pub error: Option<String>,
}

#[derive(Deserialize)]
pub struct Input {
    pub view_name: String,
    /// Whether the rows carry their own row kinds (a changelog input).
    #[serde(default)]
    pub changelog: bool,
    pub schema: Vec<String>,
    pub rows: Vec<Vec<Json>>,
}

#[derive(Deserialize)]
pub struct Output {
    pub schema: Vec<String>,
    pub order: String,
    pub rows: Vec<Vec<Json>>,
}

/// The names of every recorded case.
pub fn names() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

pub fn load(name: &str) -> Case {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("conformance")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `"a BIGINT NOT NULL"` → (`a`, BIGINT NOT NULL). A time attribute is marked `*ROWTIME*`.
fn schema_entry(entry: &str) -> (String, DataType) {
    let (name, rest) = entry.split_once(' ').expect("`name TYPE`");
    let ty = rest
        .split(" *ROWTIME*")
        .next()
        .expect("split yields one part");
    (
        name.to_owned(),
        ty.parse().unwrap_or_else(|e| panic!("{entry}: {e}")),
    )
}

/// The source column of a computed input column: `ts TIMESTAMP_LTZ(3) *ROWTIME* (= ts_ms)`.
fn computed_from(entry: &str) -> Option<&str> {
    entry
        .split_once("(= ")
        .map(|(_, rest)| rest.trim_end_matches(')').trim())
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
        // Java's `LocalDateTime.toString()`, which drops zero seconds: `1970-01-01T00:00`.
        TypeKind::Timestamp { .. } => {
            let text = json.as_str().expect("a timestamp string");
            let parsed = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
                .or_else(|_| chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M"));
            Value::Timestamp(parsed.unwrap_or_else(|e| panic!("{text}: {e}")))
        }
        TypeKind::TimestampLtz { .. } => match json {
            Json::String(text) => Value::TimestampLtz(
                chrono::DateTime::parse_from_rfc3339(text)
                    .unwrap_or_else(|e| panic!("{text}: {e}"))
                    .to_utc(),
            ),
            _ => Value::TimestampLtz(
                chrono::DateTime::from_timestamp_millis(int()).expect("in range"),
            ),
        },
        other => panic!("conformance values of type {other} are not supported yet"),
    }
}

/// The case's input as a table in a fresh session with two target partitions.
pub fn session(case: &Case) -> Session {
    session_with_partitions(case, 2)
}

/// The case's input in a session whose target partitions are Flink's parallelism (for
/// process table functions, whose processors are the target partitions), with PTF state on
/// `backend`; on disk the input comes a row at a time, so keys move out between their rows.
pub fn session_as_flink_on(case: &Case, backend: Backend) -> Session {
    let columns = columns(case);
    let session = match backend {
        Backend::Memory => {
            support::session_with_partitions(&case.input.view_name, &columns, case.parallelism)
        }
        Backend::Disk => {
            support::session_in_single_rows(&case.input.view_name, &columns, case.parallelism)
        }
    };
    use_backend(&session, backend);
    session
}

/// A bounded case (a Ballista cluster runs them too): its target partitions there, and its
/// watermark, if it has one: the time column and the delay in milliseconds.
pub struct Bounded {
    pub name: &'static str,
    pub partitions: usize,
    pub watermark: Option<(&'static str, u64)>,
}

const fn bounded(name: &'static str, partitions: usize) -> Bounded {
    Bounded {
        name,
        partitions,
        watermark: None,
    }
}

pub const BOUNDED: &[Bounded] = &[
    bounded("scalar_null_handling", 2),
    bounded("named_params_optional", 2),
    bounded("left_join_lateral_empty", 2),
    bounded("over_rows_2_preceding", 2),
    bounded("ptf_counter_set_semantics", 1),
    bounded("ptf_row_semantics", 1),
    // Timers and ORDER BY on the watermark. Two partitions (Flink ran one): a key's rows
    // meet in one processor, whose watermark still follows every row of the one source.
    Bounded {
        name: "ptf_named_timer_timeout",
        partitions: 2,
        watermark: Some(("ts", 0)),
    },
    Bounded {
        name: "ptf_order_by_late",
        partitions: 2,
        watermark: Some(("ts", 2000)),
    },
    // Window aggregates: the watermark "after every row: max(ts_ms seen) - 1000 ms". Two
    // partitions: the keys' windows close in two processors on the one source's watermark.
    Bounded {
        name: "tumble_window_udaf",
        partitions: 2,
        watermark: Some(("ts", 1000)),
    },
    Bounded {
        name: "session_window_udaf_merge",
        partitions: 2,
        watermark: Some(("ts", 1000)),
    },
];

impl Bounded {
    /// The case's input in `session`, with its watermark.
    pub fn register_input(&self, case: &Case, session: &Session) {
        session
            .register_batch(&case.input.view_name, support::batch(&columns(case)))
            .unwrap_or_else(|e| panic!("{}: {e}", case.case));
        if let Some((column, delay)) = self.watermark {
            session.declare_watermark(
                &case.input.view_name,
                column,
                std::time::Duration::from_millis(delay),
            );
        }
    }
}

/// The functions of the bounded cases that `udf_examples::catalog::register_all` does not
/// register (the PTFs are the examples').
pub fn register_bounded_functions(session: &Session) -> udf_runtime::datafusion::error::Result<()> {
    session.register(scalar::mix)?;
    session.register(scalar::mix_prim)?;
    session.register(scalar::null_as_zero)?;
    session.register(scalar::greet)?;
    session.register(table::split)?;
    session.register(aggregate::WAvg)
}

/// The case's input in a session on a Ballista cluster in this process (standalone mode),
/// with `partitions` target partitions and the functions `register` registers: a bounded case
/// runs there too, each plan through the cluster's codecs.
pub async fn on_a_cluster(
    case: &Case,
    partitions: usize,
    register: impl FnOnce(&Session) -> udf_runtime::datafusion::error::Result<()>,
) -> Session {
    let config = SessionConfig::new().with_target_partitions(partitions);
    let session = Session::standalone_with_config(config, register)
        .await
        .unwrap_or_else(|e| panic!("{}: a standalone cluster: {e}", case.case));
    let bounded = BOUNDED
        .iter()
        .find(|b| b.name == case.case)
        .unwrap_or_else(|| panic!("{} is not in BOUNDED", case.case));
    bounded.register_input(case, &session);
    session
}

fn session_with_partitions(case: &Case, partitions: usize) -> Session {
    support::session_with_partitions(&case.input.view_name, &columns(case), partitions)
}

/// The case's input as columns (without row kinds).
pub fn columns(case: &Case) -> Vec<Column> {
    let names: Vec<String> = case
        .input
        .schema
        .iter()
        .map(|e| schema_entry(e).0)
        .collect();
    let columns: Vec<Column> = case
        .input
        .schema
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let (name, data_type) = schema_entry(entry);
            // A computed column reads its source column (rows carry no value for it).
            let source = computed_from(entry).map_or(i, |source| {
                names
                    .iter()
                    .position(|n| n == source)
                    .unwrap_or_else(|| panic!("{}: no column {source}", case.case))
            });
            let values = case
                .input
                .rows
                .iter()
                .map(|row| {
                    assert!(
                        case.input.changelog || row[0] == "+I",
                        "{}: an insert-only input has a row of kind {}",
                        case.case,
                        row[0]
                    );
                    value(&row[source + 1], &data_type)
                })
                .collect();
            Column {
                name,
                data_type,
                values,
            }
        })
        .collect();
    columns
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
    match case.output.order.as_str() {
        "total" => assert_eq!(actual, expected, "{}", case.case),
        // Only the order within a partition key (`k`) is fixed.
        "per_key" => {
            let key = expected_columns
                .iter()
                .position(|(name, _)| name == "k")
                .unwrap_or_else(|| panic!("{}: `per_key` output without `k`", case.case));
            assert_eq!(by_key(actual, key), by_key(expected, key), "{}", case.case)
        }
        other => panic!("{}: unknown output order `{other}`", case.case),
    }
}

/// Rows grouped by their column `key`, each group in its original order.
fn by_key(rows: Vec<Vec<Value>>, key: usize) -> Vec<(String, Vec<Vec<Value>>)> {
    let mut groups: Vec<(String, Vec<Vec<Value>>)> = Vec::new();
    for row in rows {
        let key = row[key].to_string();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, rows)) => rows.push(row),
            None => groups.push((key, vec![row])),
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    groups
}
