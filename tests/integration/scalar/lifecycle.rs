//! Rule 6: `open` runs once per instance before the first call, `close` after the last;
//! job parameters reach `open`. Each query gets its own instance.

use std::sync::atomic::Ordering;

use udf_core::Value;
use udf_examples::scalar::hash_code::HashCodeFunction;
use udf_examples::scalar::resource::ResourceFunction;
use udf_runtime::Session;

use futures::StreamExt;

use crate::support::{batches_to_rows, rows};

fn java_hash(s: &str) -> i32 {
    udf_examples::java::string_hash(s)
}

#[tokio::test]
async fn open_reads_job_parameters_with_defaults() {
    let session = Session::new();
    session.register(HashCodeFunction::default()).unwrap();
    let sql = "SELECT hashCode(s) FROM (VALUES ('flink')) AS t(s)";
    assert_eq!(
        rows(&session, sql).await,
        vec![vec![Value::Int(java_hash("flink").wrapping_mul(12))]]
    );

    session.set_job_parameter("hashcode_factor", "31");
    assert_eq!(
        rows(&session, sql).await,
        vec![vec![Value::Int(java_hash("flink").wrapping_mul(31))]]
    );

    session
        .sql("SET job.hashcode_factor = '7'")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        rows(&session, sql).await,
        vec![vec![Value::Int(java_hash("flink").wrapping_mul(7))]]
    );
}

#[tokio::test]
async fn a_failing_open_fails_the_query_with_the_function_name() {
    let session = Session::new();
    session.register(HashCodeFunction::default()).unwrap();
    session.set_job_parameter("hashcode_factor", "many");
    let message =
        crate::support::error(&session, "SELECT hashCode(s) FROM (VALUES ('x')) AS t(s)").await;
    assert!(
        message.contains("function `hashcode` failed to open: invalid digit"),
        "{message}"
    );
}

#[tokio::test]
async fn each_query_opens_its_own_instance_and_closes_it_when_done() {
    let session = Session::new();
    let function = ResourceFunction::default();
    let open = function.open_resources.clone();
    session.register(function).unwrap();
    let sql = "SELECT ResourceFunction(s) FROM (VALUES ('a'), ('b')) AS t(s)";

    let mut stream = session
        .sql(sql)
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    assert_eq!(
        open.load(Ordering::SeqCst),
        0,
        "not opened before the first call"
    );
    let first = stream.next().await.expect("a batch").unwrap();
    assert_eq!(
        open.load(Ordering::SeqCst),
        1,
        "opened for the running query"
    );
    let values: Vec<Value> = batches_to_rows(&[first])
        .into_iter()
        .map(|mut r| r.remove(0))
        .collect();
    assert_eq!(
        values,
        vec![Value::from("processed(a)"), Value::from("processed(b)")]
    );
    assert!(stream.next().await.is_none());
    drop(stream);
    assert_eq!(
        open.load(Ordering::SeqCst),
        0,
        "closed once the query's plan is gone"
    );

    rows(&session, sql).await;
    rows(&session, sql).await;
    assert_eq!(
        open.load(Ordering::SeqCst),
        0,
        "every query closes what it opened"
    );
}

/// Counts its calls in a metric registered through the `FunctionContext`.
#[derive(Clone, Default)]
struct CountedUpper {
    calls: Option<udf_core::Counter>,
}

#[udf_core::scalar_function]
impl CountedUpper {
    fn open(&mut self, context: &udf_core::FunctionContext) {
        self.calls = Some(context.metric_group().counter("calls"));
    }

    fn eval(&self, s: &str) -> String {
        if let Some(calls) = &self.calls {
            calls.inc();
        }
        s.to_uppercase()
    }
}

#[tokio::test]
async fn metrics_registered_in_open_are_reported_by_the_session() {
    let session = Session::new();
    session.register(CountedUpper::default()).unwrap();
    let sql = "SELECT CountedUpper(s) FROM (VALUES ('a'), ('b'), (NULL)) AS t(s)";
    rows(&session, sql).await;
    rows(&session, sql).await;
    let metrics = session.metrics().snapshot();
    assert_eq!(
        metrics.get("countedupper.calls"),
        Some(&4),
        "two queries, two non-NULL rows each: {metrics:?}"
    );
}
