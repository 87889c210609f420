//! Rule 6 of docs/semantics.md for every kind of function with `open`/`close`: each instance a
//! query opens is closed exactly once, after its last call — when the query ends, when it
//! fails midway, and when its stream is dropped before the end. (Aggregates and table
//! aggregates have no `open`/`close`.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::prelude::SessionConfig;

use crate::support;

/// What the instances of one function did, over all of them.
#[derive(Clone, Debug, Default)]
struct Ledger(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    opened: AtomicUsize,
    closed: AtomicUsize,
    calls: AtomicUsize,
    /// Calls of an instance that was not open (before `open` or after `close`).
    stray_calls: AtomicUsize,
    /// `close` of an instance that was not open.
    stray_closes: AtomicUsize,
}

impl Ledger {
    fn open(&self, open: &mut bool) {
        *open = true;
        self.0.opened.fetch_add(1, Ordering::SeqCst);
    }

    fn close(&self, open: &mut bool) {
        if !*open {
            self.0.stray_closes.fetch_add(1, Ordering::SeqCst);
        }
        *open = false;
        self.0.closed.fetch_add(1, Ordering::SeqCst);
    }

    fn call(&self, open: bool) {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
        if !open {
            self.0.stray_calls.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Every instance that was opened was closed once, no call came outside open and close,
    /// and the query called the function. A failed or dropped query's tasks stop (and drop
    /// what they hold) once the runtime gets to them: closing may follow shortly after.
    async fn assert_balanced(&self, what: &str) {
        let get = |counter: &AtomicUsize| counter.load(Ordering::SeqCst);
        let counts = &self.0;
        for _ in 0..500 {
            if get(&counts.opened) == get(&counts.closed) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(get(&counts.opened) > 0, "{what}: opened");
        assert!(get(&counts.calls) > 0, "{what}: called");
        assert_eq!(
            get(&counts.opened),
            get(&counts.closed),
            "{what}: every opened instance closed"
        );
        assert_eq!(
            get(&counts.stray_calls),
            0,
            "{what}: calls outside open..close"
        );
        assert_eq!(
            get(&counts.stray_closes),
            0,
            "{what}: closes of unopened instances"
        );
    }
}

/// A value the probes fail on.
const FAIL: i64 = -1;

fn check(value: i64) -> Result<i64> {
    if value == FAIL {
        bail!("the probe fails on {FAIL}");
    }
    Ok(value)
}

#[derive(Clone, Debug, Default)]
struct ScalarProbe {
    ledger: Ledger,
    open: bool,
}

#[scalar_function(name = "scalar_probe")]
impl ScalarProbe {
    fn open(&mut self, _context: &FunctionContext) {
        self.ledger.open(&mut self.open);
    }

    fn close(&mut self) {
        self.ledger.close(&mut self.open);
    }

    fn eval(&self, value: i64) -> Result<i64> {
        self.ledger.call(self.open);
        check(value)
    }
}

#[derive(Clone, Debug, Default)]
struct AsyncScalarProbe {
    ledger: Ledger,
    open: bool,
}

#[async_scalar_function(name = "async_scalar_probe")]
impl AsyncScalarProbe {
    fn open(&mut self, _context: &FunctionContext) {
        self.ledger.open(&mut self.open);
    }

    fn close(&mut self) {
        self.ledger.close(&mut self.open);
    }

    async fn eval(&self, value: i64) -> Result<i64> {
        self.ledger.call(self.open);
        check(value)
    }
}

#[derive(Clone, Debug, Default)]
struct TableProbe {
    ledger: Ledger,
    open: bool,
}

#[table_function(name = "table_probe")]
impl TableProbe {
    fn open(&mut self, _context: &FunctionContext) {
        self.ledger.open(&mut self.open);
    }

    fn close(&mut self) {
        self.ledger.close(&mut self.open);
    }

    fn eval(&self, value: i64, out: &mut Collector<i64>) -> Result<()> {
        self.ledger.call(self.open);
        out.collect(check(value)?);
        Ok(())
    }
}

#[derive(Clone, Debug, Default)]
struct AsyncTableProbe {
    ledger: Ledger,
    open: bool,
}

#[async_table_function(name = "async_table_probe")]
impl AsyncTableProbe {
    fn open(&mut self, _context: &FunctionContext) {
        self.ledger.open(&mut self.open);
    }

    fn close(&mut self) {
        self.ledger.close(&mut self.open);
    }

    async fn eval(&self, value: i64) -> Result<Vec<i64>> {
        self.ledger.call(self.open);
        Ok(vec![check(value)?])
    }
}

#[derive(Clone, Debug, Default)]
struct PtfProbe {
    ledger: Ledger,
    open: bool,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Seen {
    rows: i64,
}

#[ptf(name = "ptf_probe")]
impl PtfProbe {
    fn open(&mut self, _context: &FunctionContext) {
        self.ledger.open(&mut self.open);
    }

    fn close(&mut self) {
        self.ledger.close(&mut self.open);
    }

    fn eval(
        &self,
        #[state] seen: &mut Seen,
        #[argument(set_semantic_table)] input: Row,
        out: &mut Collector<i64>,
    ) -> Result<()> {
        self.ledger.call(self.open);
        seen.rows += 1;
        let value = input.field("v").and_then(Value::as_i64).unwrap_or(0);
        out.collect(check(value)?);
        Ok(())
    }
}

/// A session of 2 partitions and batches of 4 rows over `t(k, v)`: 64 rows, `v` = 0..64 and
/// `FAIL` at row `fail_at` if given.
async fn session(fail_at: Option<usize>) -> Session {
    let session = Session::with_config(
        SessionConfig::new()
            .with_target_partitions(2)
            .with_batch_size(4),
    );
    let rows: Vec<String> = (0..64)
        .map(|i| {
            let v = if Some(i) == fail_at { FAIL } else { i as i64 };
            format!("({}, CAST({v} AS BIGINT))", i % 5)
        })
        .collect();
    let create = format!(
        "CREATE TABLE t AS SELECT * FROM (VALUES {}) AS v(k, v)",
        rows.join(", ")
    );
    support::rows(&session, &create).await;
    session
}

/// The query of each kind over `t`, with its function registered in `session`.
fn queries(session: &Session) -> Vec<(&'static str, &'static str, Ledger)> {
    let scalar = ScalarProbe::default();
    let async_scalar = AsyncScalarProbe::default();
    let table = TableProbe::default();
    let async_table = AsyncTableProbe::default();
    let ptf = PtfProbe::default();
    let ledgers = [
        scalar.ledger.clone(),
        async_scalar.ledger.clone(),
        table.ledger.clone(),
        async_table.ledger.clone(),
        ptf.ledger.clone(),
    ];
    session.register(scalar).unwrap();
    session.register(async_scalar).unwrap();
    session.register(table).unwrap();
    session.register(async_table).unwrap();
    session.register(ptf).unwrap();
    let sql = [
        ("scalar", "SELECT scalar_probe(v) FROM t"),
        ("async scalar", "SELECT async_scalar_probe(v) FROM t"),
        (
            "table",
            "SELECT w FROM t, LATERAL TABLE(table_probe(t.v)) AS x(w)",
        ),
        (
            "async table",
            "SELECT w FROM t, LATERAL TABLE(async_table_probe(t.v)) AS x(w)",
        ),
        (
            "process table",
            "SELECT * FROM ptf_probe(input => TABLE t PARTITION BY k)",
        ),
    ];
    sql.into_iter()
        .zip(ledgers)
        .map(|((kind, sql), ledger)| (kind, sql, ledger))
        .collect()
}

#[tokio::test]
async fn every_instance_closes_once_after_a_query_ends() {
    let session = session(None).await;
    for (kind, sql, ledger) in queries(&session) {
        let rows: usize = session
            .sql(sql)
            .await
            .unwrap()
            .collect()
            .await
            .unwrap()
            .iter()
            .map(|b| b.num_rows())
            .sum();
        assert_eq!(rows, 64, "{kind}");
        ledger.assert_balanced(kind).await;
    }
}

#[tokio::test]
async fn every_instance_closes_once_when_a_query_fails() {
    let session = session(Some(37)).await;
    for (kind, sql, ledger) in queries(&session) {
        let error = session.sql(sql).await.unwrap().collect().await.unwrap_err();
        assert!(
            error.to_string().contains("the probe fails on -1"),
            "{kind}: {error}"
        );
        ledger.assert_balanced(kind).await;
    }
}

#[tokio::test]
async fn every_instance_closes_once_when_a_query_is_dropped_midway() {
    let session = session(None).await;
    for (kind, sql, ledger) in queries(&session) {
        let mut streams = session
            .sql(sql)
            .await
            .unwrap()
            .execute_stream_partitioned()
            .await
            .unwrap();
        let first = streams[0].next().await.expect("a first batch").unwrap();
        assert!(first.num_rows() > 0, "{kind}");
        drop(streams);
        ledger.assert_balanced(kind).await;
    }
}
