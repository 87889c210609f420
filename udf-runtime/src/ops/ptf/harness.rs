//! A test harness for process table functions: one processor of a function, driven from a
//! plain `#[test]` without writing SQL — push rows, move the watermark and the processing
//! clock, end the input, and look at the rows emitted, the timers fired and the state per key.
//!
//! ```text
//! let mut harness = PtfHarness::builder(TimerFunction, schema)
//!     .partition_by(["k"])
//!     .on_time("ts")
//!     .build()
//!     .await?;
//! harness.push(batch)?;                  // rows of `schema`, under the current watermark
//! harness.advance_watermark(60_000)?;    // timers at or before 60 s fire
//! assert_eq!(harness.take_rows()?, ...); // what was emitted
//! assert_eq!(harness.take_fired_timers()?, ...);
//! let count: Option<Count> = harness.value_state("count", &[ScalarValue::from("a")])?;
//! ```
//!
//! The harness plans the call as SQL would (`f(input => TABLE t PARTITION BY k, on_time =>
//! DESCRIPTOR(ts))`) and hands the processor what the router would: the same binding, state,
//! timers and output as in a query, with the watermark and the clock in the test's hands.

use std::any::Any;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{Result, ScalarValue, exec_err, plan_err};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionConfig;
use serde::de::DeserializeOwned;
use udf_core::{UserFunction, Value};

use super::driver::Driver;
use super::exec::PtfExec;
use super::router::{Routed, time_millis};
use crate::Session;

/// The name the harness gives the function's input table.
const INPUT: &str = "harness_input";

/// A timer that fired: its key's values, name and time.
#[derive(Clone, Debug, PartialEq)]
pub struct FiredTimer {
    pub key: Vec<Value>,
    pub name: Option<String>,
    pub time: i64,
}

/// How the harness calls the function (see [`PtfHarness::builder`]).
pub struct PtfHarnessBuilder {
    session: Session,
    function: String,
    schema: SchemaRef,
    table: String,
    partition_by: Vec<String>,
    on_time: Option<String>,
    args: Vec<(String, ScalarValue)>,
    registered: Result<()>,
}

impl PtfHarnessBuilder {
    /// The name of the function's table argument (`input` by default).
    pub fn table(mut self, name: &str) -> Self {
        self.table = name.to_owned();
        self
    }

    /// The PARTITION BY columns of the input.
    pub fn partition_by<'a>(mut self, columns: impl IntoIterator<Item = &'a str>) -> Self {
        self.partition_by = columns.into_iter().map(str::to_owned).collect();
        self
    }

    /// The input's time column (`on_time => DESCRIPTOR(column)`): rows carry their time, and
    /// [`PtfHarness::advance_watermark`] moves the watermark.
    pub fn on_time(mut self, column: &str) -> Self {
        self.on_time = Some(column.to_owned());
        self
    }

    /// A scalar argument by name.
    pub fn arg(mut self, name: &str, value: impl Into<ScalarValue>) -> Self {
        self.args.push((name.to_owned(), value.into()));
        self
    }

    /// Plans the call and makes its processor (opening the function if it has `open`).
    pub async fn build(self) -> Result<PtfHarness> {
        self.registered?;
        let session = self.session;
        let empty = RecordBatch::new_empty(self.schema.clone());
        let table = MemTable::try_new(self.schema.clone(), vec![vec![empty]])?;
        session.register_table(INPUT, Arc::new(table))?;
        let time = match &self.on_time {
            Some(column) => {
                session.declare_watermark(INPUT, column, std::time::Duration::ZERO);
                Some((self.schema.index_of(column)?, column.clone()))
            }
            None => None,
        };
        let mut args = vec![format!("{} => TABLE {INPUT}", quoted(&self.table))];
        if !self.partition_by.is_empty() {
            let keys: Vec<String> = self.partition_by.iter().map(|k| quoted(k)).collect();
            args[0].push_str(&format!(" PARTITION BY {}", keys.join(", ")));
        }
        if let Some(column) = &self.on_time {
            args.push(format!("on_time => DESCRIPTOR({})", quoted(column)));
        }
        for (name, value) in &self.args {
            args.push(format!("{} => {}", quoted(name), literal(name, value)?));
        }
        let sql = format!(
            "SELECT * FROM {}({})",
            quoted(&self.function),
            args.join(", ")
        );
        let plan = session.sql(&sql).await?.create_physical_plan().await?;
        let Some(exec) = PtfExec::find(&plan) else {
            return plan_err!("`{}` is not a process table function", self.function);
        };
        let exec = (exec.as_ref() as &dyn Any)
            .downcast_ref::<PtfExec>()
            .expect("found as a PtfExec");
        let mut driver = exec.driver(&session.task_ctx(), 1)?;
        driver.timer_log = Some(Vec::new());
        Ok(PtfHarness {
            _session: session,
            driver,
            schema: self.schema,
            time,
            watermark: None,
            now: 0,
            ended: false,
        })
    }
}

/// One processor of a process table function, driven by a test. See the module's comment.
pub struct PtfHarness {
    /// Keeps the function and the planned call alive.
    _session: Session,
    driver: Driver,
    schema: SchemaRef,
    /// The input column of `on_time`, and its name.
    time: Option<(usize, String)>,
    watermark: Option<i64>,
    now: i64,
    ended: bool,
}

impl PtfHarness {
    /// A harness for `function` reading rows of `schema`.
    pub fn builder(function: impl UserFunction, schema: SchemaRef) -> PtfHarnessBuilder {
        let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
        let function = function.into_function();
        let name = function.spec().name;
        let registered = session.register_as(&name, function);
        PtfHarnessBuilder {
            session,
            function: name,
            schema,
            table: "input".to_owned(),
            partition_by: Vec::new(),
            on_time: None,
            args: Vec::new(),
            registered,
        }
    }

    /// Hands the function the rows of `batch` (of the input's schema), in order, under the
    /// current watermark; timers the rows register fire when the watermark passes them.
    pub fn push(&mut self, batch: RecordBatch) -> Result<()> {
        self.check_open()?;
        if batch.schema().fields() != self.schema.fields() {
            return plan_err!(
                "the batch's columns {:?} are not the harness input's {:?}",
                batch.schema().fields(),
                self.schema.fields()
            );
        }
        let rows = batch.num_rows();
        let times = match &self.time {
            Some((column, name)) => Some(time_millis(batch.column(*column).as_ref(), name)?),
            None => None,
        };
        let before = times.as_ref().map(|_| vec![self.watermark; rows]);
        self.driver.receive(Routed::Rows {
            source: 0,
            batch,
            times,
            before,
            after: None,
            now: self.now,
        })
    }

    /// Moves the watermark to `watermark` (epoch ms; never back): timers at or before it
    /// fire, and with ORDER BY the rows it passes reach `eval`.
    pub fn advance_watermark(&mut self, watermark: i64) -> Result<()> {
        self.check_open()?;
        if self.time.is_none() {
            return exec_err!("the harness has no `on_time` column, so no watermark");
        }
        if self.watermark.is_some_and(|w| watermark < w) {
            return exec_err!(
                "the watermark moves forward only: it is {}, not {watermark}",
                self.watermark.unwrap_or_default()
            );
        }
        self.watermark = Some(watermark);
        self.driver.receive(Routed::Rows {
            source: 0,
            batch: RecordBatch::new_empty(self.schema.clone()),
            times: Some(Vec::new()),
            before: Some(Vec::new()),
            after: Some(watermark),
            now: self.now,
        })
    }

    /// Sets the processing time (epoch ms) later calls run at: state TTL is measured on it.
    pub fn set_processing_time(&mut self, now: i64) {
        self.now = now;
    }

    /// Ends the input, as a bounded query does: the watermark goes to +∞ and every pending
    /// timer fires once, in time order.
    pub fn end_input(&mut self) -> Result<()> {
        self.check_open()?;
        self.ended = true;
        self.driver.receive(Routed::End { source: 0 })
    }

    /// The rows emitted since the last call, as the query would output them.
    pub fn take_output(&mut self) -> Result<Vec<RecordBatch>> {
        self.driver.take_output()
    }

    /// [`PtfHarness::take_output`] as rows of values.
    pub fn take_rows(&mut self) -> Result<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        for batch in self.take_output()? {
            for row in 0..batch.num_rows() {
                let values = batch
                    .columns()
                    .iter()
                    .map(|column| udf_core::convert::array_value(column.as_ref(), row))
                    .collect::<udf_core::Result<Vec<_>>>()
                    .map_err(|e| datafusion::common::DataFusionError::Execution(e.to_string()))?;
                rows.push(values);
            }
        }
        Ok(rows)
    }

    /// The timers fired since the last call, in the order they fired.
    pub fn take_fired_timers(&mut self) -> Result<Vec<FiredTimer>> {
        let log = self.driver.timer_log.get_or_insert_with(Vec::new);
        std::mem::take(log)
            .into_iter()
            .map(|(keys, timer)| {
                let key = keys
                    .iter()
                    .map(|column| udf_core::convert::array_value(column.as_ref(), 0))
                    .collect::<udf_core::Result<Vec<_>>>()
                    .map_err(|e| datafusion::common::DataFusionError::Execution(e.to_string()))?;
                Ok(FiredTimer {
                    key,
                    name: timer.name.map(|n| n.to_string()),
                    time: timer.time,
                })
            })
            .collect()
    }

    /// Value state entry `name` of the key with values `key` (in PARTITION BY order), if it
    /// holds one.
    pub fn value_state<T: DeserializeOwned>(
        &self,
        name: &str,
        key: &[ScalarValue],
    ) -> Result<Option<T>> {
        self.driver.state().value(name, key)
    }

    /// `ListView` entry `name` of a key.
    pub fn list_state<T: DeserializeOwned>(
        &self,
        name: &str,
        key: &[ScalarValue],
    ) -> Result<Vec<T>> {
        self.driver.state().list(name, key)
    }

    /// `MapView` entry `name` of a key.
    pub fn map_state<K: DeserializeOwned, V: DeserializeOwned>(
        &self,
        name: &str,
        key: &[ScalarValue],
    ) -> Result<Vec<(K, V)>> {
        self.driver.state().map(name, key)
    }

    /// Keys holding state or timers.
    pub fn keys_held(&self) -> usize {
        self.driver.state().keys_held()
    }

    /// Timers pending.
    pub fn timers_pending(&self) -> usize {
        self.driver.state().timers_held()
    }

    fn check_open(&self) -> Result<()> {
        if self.ended {
            return exec_err!("the harness input has ended");
        }
        Ok(())
    }
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `value` as a SQL literal.
fn literal(name: &str, value: &ScalarValue) -> Result<String> {
    if value.is_null() {
        return Ok("NULL".to_owned());
    }
    Ok(match value {
        ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) => {
            format!("'{}'", s.replace('\'', "''"))
        }
        ScalarValue::Boolean(Some(b)) => b.to_string().to_uppercase(),
        ScalarValue::Int8(Some(v)) => format!("CAST({v} AS TINYINT)"),
        ScalarValue::Int16(Some(v)) => format!("CAST({v} AS SMALLINT)"),
        ScalarValue::Int32(Some(v)) => format!("CAST({v} AS INT)"),
        ScalarValue::Int64(Some(v)) => format!("CAST({v} AS BIGINT)"),
        ScalarValue::Float32(Some(v)) => format!("CAST('{v}' AS REAL)"),
        ScalarValue::Float64(Some(v)) => format!("CAST('{v}' AS DOUBLE)"),
        other => {
            return plan_err!(
                "argument `{name}`: the harness passes strings, booleans and numbers, not {}",
                other.data_type()
            );
        }
    })
}
