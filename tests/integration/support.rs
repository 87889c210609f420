//! Helpers shared by the tests: sessions over small tables, results as comparable values.

use std::cell::Cell;
use std::sync::Arc;

use udf_core::Value;
use udf_core::arrow::array::{ArrayRef, RecordBatch};
use udf_core::arrow::datatypes::{Field, Schema};
use udf_core::types::DataType;
use udf_runtime::datafusion::datasource::MemTable;
use udf_runtime::datafusion::prelude::SessionConfig;
use udf_runtime::{PtfHarnessBuilder, Session};

/// A table column: name, SQL type and values.
pub struct Column {
    pub name: String,
    pub data_type: DataType,
    pub values: Vec<Value>,
}

pub fn column(name: &str, data_type: &str, values: Vec<Value>) -> Column {
    Column {
        name: name.to_owned(),
        data_type: data_type
            .parse()
            .unwrap_or_else(|e| panic!("{data_type}: {e}")),
        values,
    }
}

pub fn batch(columns: &[Column]) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| c.data_type.to_arrow_field(&c.name))
        .collect();
    let arrays: Vec<ArrayRef> = columns
        .iter()
        .map(|c| {
            udf_core::convert::values_to_array(&c.data_type, &c.values)
                .expect("column values fit the type")
        })
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).expect("columns of equal length")
}

/// `events(k STRING, ts TIMESTAMP_LTZ(3))`, `ts` from epoch milliseconds.
pub fn events(keys: &[&str], millis: &[i64]) -> Vec<Column> {
    let keys: Vec<Option<&str>> = keys.iter().map(|k| Some(*k)).collect();
    vec![
        column("k", "STRING", strs(&keys)),
        column(
            "ts",
            "TIMESTAMP_LTZ(3)",
            millis
                .iter()
                .map(|m| Value::TimestampLtz(chrono::DateTime::from_timestamp_millis(*m).unwrap()))
                .collect(),
        ),
    ]
}

/// A session with one in-memory table. Two target partitions, whatever the machine, so
/// plans are the same everywhere.
pub fn session_with(table: &str, columns: &[Column]) -> Session {
    session_with_partitions(table, columns, 2)
}

/// A session with `partitions` target partitions, its PTF state on the backend the running
/// test is under ([`on_both_backends!`]).
pub fn session_of(partitions: usize) -> Session {
    let session = Session::with_config(SessionConfig::new().with_target_partitions(partitions));
    use_backend(&session, test_backend());
    session
}

/// A session with one in-memory table and `partitions` target partitions.
pub fn session_with_partitions(table: &str, columns: &[Column], partitions: usize) -> Session {
    let session = session_of(partitions);
    session
        .register_batch(table, batch(columns))
        .expect("register table");
    session
}

/// Every row of the query's result, as values.
pub async fn rows(session: &Session, sql: &str) -> Vec<Vec<Value>> {
    let batches = session
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}\n{e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}\n{e}"));
    batches_to_rows(&batches)
}

pub fn batches_to_rows(batches: &[RecordBatch]) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for batch in batches {
        for row in 0..batch.num_rows() {
            rows.push(
                batch
                    .columns()
                    .iter()
                    .map(|c| {
                        udf_core::convert::array_value(c.as_ref(), row).expect("readable value")
                    })
                    .collect(),
            );
        }
    }
    rows
}

/// The error of a query that must fail, at planning or while running.
pub async fn error(session: &Session, sql: &str) -> String {
    match session.sql(sql).await {
        Err(e) => e.to_string(),
        Ok(df) => match df.collect().await {
            Err(e) => e.to_string(),
            Ok(batches) => panic!("{sql} succeeded: {:?}", batches_to_rows(&batches)),
        },
    }
}

/// The text of `EXPLAIN <sql>` (plan type and plan, one block per plan).
pub async fn explain(session: &Session, sql: &str) -> String {
    let rows = rows(session, &format!("EXPLAIN {sql}")).await;
    rows.iter()
        .map(|row| format!("{}:\n{}", row[0], row[1]))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn strs(values: &[Option<&str>]) -> Vec<Value> {
    values
        .iter()
        .map(|v| v.map_or(Value::Null, Value::from))
        .collect()
}

/// The names of a query's result columns.
pub async fn column_names(session: &Session, sql: &str) -> Vec<String> {
    result_fields(session, sql)
        .await
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

/// The SQL types of a query's result columns, as text.
pub async fn column_types(session: &Session, sql: &str) -> Vec<String> {
    result_fields(session, sql)
        .await
        .iter()
        .map(|f| DataType::from_arrow_field(f).expect("SQL type").to_string())
        .collect()
}

/// The Arrow fields of a query's result (planned, not run).
async fn result_fields(session: &Session, sql: &str) -> udf_core::arrow::datatypes::Fields {
    let df = session
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}\n{e}"));
    df.schema().as_arrow().fields().clone()
}

/// A session whose table is split into `partitions` partitions (rows dealt round-robin),
/// with as many target partitions, so aggregations run in two phases.
pub fn partitioned_session(table: &str, columns: &[Column], partitions: usize) -> Session {
    let whole = batch(columns);
    let mut parts: Vec<Vec<RecordBatch>> = vec![Vec::new(); partitions];
    for row in 0..whole.num_rows() {
        parts[row % partitions].push(whole.slice(row, 1));
    }
    let session = session_of(partitions);
    let provider = MemTable::try_new(whole.schema(), parts).expect("table");
    session
        .register_table(table, Arc::new(provider))
        .expect("register table");
    session
}

/// Where a test's PTF state is kept. PTF conformance cases run under both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Disk,
}

impl Backend {
    pub const ALL: [Backend; 2] = [Backend::Memory, Backend::Disk];
}

thread_local! {
    static TEST_BACKEND: Cell<Backend> = const { Cell::new(Backend::Memory) };
}

/// The backend the sessions the running test makes keep their PTF state on.
pub fn test_backend() -> Backend {
    TEST_BACKEND.with(Cell::get)
}

/// Puts the running test under `backend` until dropped (also when the test panics, so a
/// test run after it on the same thread starts in memory).
pub fn under_backend(backend: Backend) -> impl Drop {
    struct Scope;
    impl Drop for Scope {
        fn drop(&mut self) {
            TEST_BACKEND.with(|b| b.set(Backend::Memory));
        }
    }
    TEST_BACKEND.with(|b| b.set(backend));
    Scope
}

/// Makes each test it wraps twice: `<name>::in_memory` and `<name>::on_disk`, the second
/// with every session the test makes through these helpers keeping its PTF state on disk
/// with the smallest budget, so keys move out and back between calls. One body, both
/// backends, the same assertions.
#[macro_export]
macro_rules! on_both_backends {
    ($($(#[$meta:meta])* async fn $name:ident() $body:block)*) => {$(
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn body() $body

            #[tokio::test]
            async fn in_memory() {
                let _scope = $crate::support::under_backend($crate::support::Backend::Memory);
                body().await
            }

            #[tokio::test]
            async fn on_disk() {
                let _scope = $crate::support::under_backend($crate::support::Backend::Disk);
                body().await
            }
        }
    )*};
}

/// Keeps `session`'s PTF state on `backend`. On disk the budget is the smallest, so keys
/// move out after every call and come back for their next rows.
pub fn use_backend(session: &Session, backend: Backend) {
    for (key, value) in backend_options(backend) {
        session.set_option(key, &value).unwrap();
    }
}

/// A harness under the running test's backend (see [`use_backend`]).
pub fn harness_on_test_backend(mut builder: PtfHarnessBuilder) -> PtfHarnessBuilder {
    for (key, value) in backend_options(test_backend()) {
        builder = builder.option(key, &value);
    }
    builder
}

/// Puts `session`'s state on the disk backend under `root`, within `budget`.
pub fn use_disk(session: &Session, root: &std::path::Path, budget: &str) {
    session.set_option("state.backend.type", "fjall").unwrap();
    session
        .set_option("state.backend.fjall.localdir", root.to_str().unwrap())
        .unwrap();
    session
        .set_option("state.backend.fjall.memory-budget", budget)
        .unwrap();
}

/// The session options that put PTF state on `backend`.
fn backend_options(backend: Backend) -> Vec<(&'static str, String)> {
    match backend {
        Backend::Memory => Vec::new(),
        Backend::Disk => {
            let root = std::env::temp_dir().join("udf-tests-state");
            vec![
                ("state.backend.type", "fjall".to_owned()),
                (
                    "state.backend.fjall.localdir",
                    root.to_str().unwrap().to_owned(),
                ),
                ("state.backend.fjall.memory-budget", "1 kb".to_owned()),
            ]
        }
    }
}

/// A session with one table in one-row batches (each row a call of its own) and
/// `partitions` target partitions.
pub fn session_in_single_rows(table: &str, columns: &[Column], partitions: usize) -> Session {
    let whole = batch(columns);
    let rows = (0..whole.num_rows())
        .map(|row| whole.slice(row, 1))
        .collect();
    let session = session_of(partitions);
    let provider = MemTable::try_new(whole.schema(), vec![rows]).expect("table");
    session
        .register_table(table, Arc::new(provider))
        .expect("register table");
    session
}

/// The value of metric `name` from EXPLAIN ANALYZE's text, which rounds large counts
/// (`8.91 K`).
pub fn metric(plan: &str, name: &str) -> f64 {
    let rest = plan
        .split(&format!("{name}="))
        .nth(1)
        .unwrap_or_else(|| panic!("no metric {name} in\n{plan}"));
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let scale = match rest[number.len()..].trim_start().chars().next() {
        Some('K') => 1e3,
        Some('M') => 1e6,
        Some('B') => 1e9,
        _ => 1.0,
    };
    number.parse::<f64>().expect("a number") * scale
}

/// `groups_moved_out` and `groups_moved_in` of a run of `sql` on the disk backend (from
/// EXPLAIN ANALYZE, which runs it), and the plan's text for messages.
pub async fn groups_moved(session: &Session, sql: &str) -> (f64, f64, String) {
    let plan = rows(session, &format!("EXPLAIN ANALYZE {sql}")).await;
    let text = plan[0][1].to_string();
    (
        metric(&text, "groups_moved_out"),
        metric(&text, "groups_moved_in"),
        text,
    )
}

/// That a run on the disk backend under `root` moved at least `least_out` groups out and at
/// least 500 (no more than went out) back in (`moved` is `groups_moved`'s answer), and that its
/// store went with it; then removes `root`. `what` names the run.
pub fn assert_groups_moved(
    moved: (f64, f64, String),
    least_out: f64,
    root: &std::path::Path,
    what: &str,
) {
    let (out, back, text) = moved;
    assert!(out >= least_out, "{what}: {text}");
    assert!(back >= 500.0 && back <= out, "{what}: {text}");
    let left = left_in(root);
    assert!(
        left.is_empty(),
        "{what}: each run's store goes with it: {left:?}"
    );
    let _ = std::fs::remove_dir_all(root);
}

/// Sends `batches` through `feed`, then closes it, while reading `output` to its end (each
/// batch within `wait`): what it read.
pub async fn through_feed(
    feed: udf_runtime::Feed,
    batches: &[RecordBatch],
    mut output: udf_runtime::datafusion::execution::SendableRecordBatchStream,
    wait: std::time::Duration,
) -> Vec<RecordBatch> {
    use futures::StreamExt;
    let rows = batches.to_vec();
    let sending = tokio::spawn(async move {
        for batch in rows {
            feed.send(batch).await.unwrap();
        }
        feed.close();
    });
    let mut received = Vec::new();
    while let Some(batch) = tokio::time::timeout(wait, output.next())
        .await
        .expect("rows go out, and end when the feed closes")
    {
        received.push(batch.unwrap());
    }
    sending.await.unwrap();
    received
}

/// What runs left in the disk backend's `root`: nothing, as each run's store goes with it.
pub fn left_in(root: &std::path::Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(root)
        .map(|entries| entries.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default()
}

/// This test binary again, running only `test` with `envs` set (how a test starts a child
/// process: the test sees the variables and plays the child's part); its stdout lines.
pub fn spawn_test(
    test: &str,
    envs: &[(&str, String)],
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", test, "--nocapture"])
        .envs(envs.iter().map(|(name, value)| (name, value)))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("the child starts");
    let stdout = child.stdout.take().expect("a piped stdout");
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    (child, received)
}

/// Waits (at most `limit`) for a line starting with `prefix`; `None` if the child ended first.
pub fn wait_for_line(
    lines: &std::sync::mpsc::Receiver<String>,
    prefix: &str,
    limit: std::time::Duration,
) -> Option<String> {
    use std::sync::mpsc::RecvTimeoutError;
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.starts_with(prefix) => return Some(line),
            Ok(_) => {}
            Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no `{prefix}` from the child within {limit:?}")
            }
        }
    }
}
