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
use crate::Session;
use crate::ops::routing::routed::Routed;
use crate::ops::routing::source_watermark::time_millis;

/// The name the harness gives the function's input table.
const INPUT: &str = "harness_input";

/// A timer that fired: its key's values, name and time.
#[derive(Clone, Debug, PartialEq)]
pub struct FiredTimer {
    pub key: Vec<Value>,
    pub name: Option<String>,
    pub time: i64,
}

/// One table argument of the harness's call.
struct HarnessTable {
    /// The argument's name in the function's signature.
    argument: String,
    schema: SchemaRef,
    partition_by: Vec<String>,
    order_by: Vec<String>,
}

/// How the harness calls the function (see [`PtfHarness::builder`]).
pub struct PtfHarnessBuilder {
    session: Session,
    function: String,
    /// The table arguments; the last one is the one `table` and `partition_by` set.
    tables: Vec<HarnessTable>,
    on_time: Vec<String>,
    args: Vec<(String, ScalarValue)>,
    /// The first failure of registering the function or setting an option.
    registered: Result<()>,
}

impl PtfHarnessBuilder {
    /// The name of the function's table argument (`input` by default) — the latest one
    /// given, with several.
    pub fn table(mut self, name: &str) -> Self {
        self.latest().argument = name.to_owned();
        self
    }

    /// Another table argument `name` of the function, with rows of `schema`: the next
    /// `partition_by` is its own. Rows go to it with [`PtfHarness::push_to`].
    pub fn and_table(mut self, name: &str, schema: SchemaRef) -> Self {
        self.tables.push(HarnessTable {
            argument: name.to_owned(),
            schema,
            partition_by: Vec::new(),
            order_by: Vec::new(),
        });
        self
    }

    /// The ORDER BY columns of the (latest) table, the time column first: its rows reach
    /// `eval` in that order once the table's watermark passes them.
    pub fn order_by<'a>(mut self, columns: impl IntoIterator<Item = &'a str>) -> Self {
        self.latest().order_by = columns.into_iter().map(str::to_owned).collect();
        self
    }

    /// The PARTITION BY columns of the (latest) table.
    pub fn partition_by<'a>(mut self, columns: impl IntoIterator<Item = &'a str>) -> Self {
        self.latest().partition_by = columns.into_iter().map(str::to_owned).collect();
        self
    }

    /// The time column (`on_time => DESCRIPTOR(column)`): rows carry their time, and
    /// [`PtfHarness::advance_watermark`] moves the watermark. With several tables, each
    /// table's time column is the one of these names it has (call `on_time` once per name).
    pub fn on_time(mut self, column: &str) -> Self {
        if !self.on_time.iter().any(|c| c == column) {
            self.on_time.push(column.to_owned());
        }
        self
    }

    /// Sets session option `key` for the call, as `SET 'key' = 'value'` would — e.g.
    /// `state.backend.type` to run the processor with its state on disk.
    pub fn option(mut self, key: &str, value: &str) -> Self {
        if self.registered.is_ok() {
            self.registered = self.session.set_option(key, value);
        }
        self
    }

    /// A scalar argument by name.
    pub fn arg(mut self, name: &str, value: impl Into<ScalarValue>) -> Self {
        self.args.push((name.to_owned(), value.into()));
        self
    }

    fn latest(&mut self) -> &mut HarnessTable {
        self.tables
            .last_mut()
            .expect("the builder starts with a table")
    }

    /// Plans the call and makes its processor (opening the function if it has `open`).
    pub async fn build(self) -> Result<PtfHarness> {
        self.registered?;
        let session = self.session;
        let mut args = Vec::new();
        let mut inputs = Vec::new();
        for (index, table) in self.tables.iter().enumerate() {
            let registered = if index == 0 {
                INPUT.to_owned()
            } else {
                format!("{INPUT}_{index}")
            };
            let empty = RecordBatch::new_empty(table.schema.clone());
            let memory = MemTable::try_new(table.schema.clone(), vec![vec![empty]])?;
            session.register_table(registered.as_str(), Arc::new(memory))?;
            let time = self
                .on_time
                .iter()
                .find_map(|column| Some((table.schema.index_of(column).ok()?, column.clone())));
            if let Some((_, column)) = &time {
                session.declare_watermark(&registered, column, std::time::Duration::ZERO);
            }
            let mut arg = format!("{} => TABLE {registered}", quoted(&table.argument));
            if !table.partition_by.is_empty() {
                let keys: Vec<String> = table.partition_by.iter().map(|k| quoted(k)).collect();
                arg.push_str(&format!(" PARTITION BY {}", keys.join(", ")));
            }
            if !table.order_by.is_empty() {
                let columns: Vec<String> = table.order_by.iter().map(|c| quoted(c)).collect();
                arg.push_str(&format!(" ORDER BY ({})", columns.join(", ")));
            }
            args.push(arg);
            inputs.push(HarnessInput {
                argument: table.argument.clone(),
                schema: table.schema.clone(),
                time,
                watermark: None,
            });
        }
        if !self.on_time.is_empty() {
            let columns: Vec<String> = self.on_time.iter().map(|c| quoted(c)).collect();
            args.push(format!("on_time => DESCRIPTOR({})", columns.join(", ")));
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
        // One source per table: source `i` is table `i`.
        let mut driver = exec.driver(&session.task_ctx(), &vec![1; inputs.len()])?;
        driver.timer_log = Some(Vec::new());
        Ok(PtfHarness {
            _session: session,
            driver,
            inputs,
            now: 0,
            ended: false,
        })
    }
}

/// One table argument as the harness feeds it.
struct HarnessInput {
    argument: String,
    schema: SchemaRef,
    /// The input column of `on_time`, and its name.
    time: Option<(usize, String)>,
    watermark: Option<i64>,
}

/// One processor of a process table function, driven by a test. See the module's comment.
pub struct PtfHarness {
    /// Keeps the function and the planned call alive.
    _session: Session,
    driver: Driver,
    /// The table arguments, in the order the builder gave them (the driver's sources).
    inputs: Vec<HarnessInput>,
    now: i64,
    ended: bool,
}

impl PtfHarness {
    /// A harness for `function` reading rows of `schema` (its table argument; more with
    /// [`PtfHarnessBuilder::and_table`]).
    pub fn builder(function: impl UserFunction, schema: SchemaRef) -> PtfHarnessBuilder {
        let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
        let function = function.into_function();
        let name = function.spec().name;
        let registered = session.register_as(&name, function);
        PtfHarnessBuilder {
            session,
            function: name,
            tables: vec![HarnessTable {
                argument: "input".to_owned(),
                schema,
                partition_by: Vec::new(),
                order_by: Vec::new(),
            }],
            on_time: Vec::new(),
            args: Vec::new(),
            registered,
        }
    }

    /// Hands the function the rows of `batch` (of the input's schema), in order, under the
    /// current watermark; timers the rows register fire when the watermark passes them. With
    /// several tables, name the table: [`PtfHarness::push_to`].
    pub fn push(&mut self, batch: RecordBatch) -> Result<()> {
        if self.inputs.len() > 1 {
            return plan_err!(
                "the harness has {} tables ({}): push rows with `push_to(table, batch)`",
                self.inputs.len(),
                self.table_names()
            );
        }
        self.push_at(0, batch)
    }

    /// Hands table argument `table` the rows of `batch` (of that table's schema).
    pub fn push_to(&mut self, table: &str, batch: RecordBatch) -> Result<()> {
        let index = self.table_index(table)?;
        self.push_at(index, batch)
    }

    fn push_at(&mut self, source: usize, batch: RecordBatch) -> Result<()> {
        self.check_open()?;
        let input = &self.inputs[source];
        if batch.schema().fields() != input.schema.fields() {
            return plan_err!(
                "the batch's columns {:?} are not those of the harness table `{}`: {:?}",
                batch.schema().fields(),
                input.argument,
                input.schema.fields()
            );
        }
        let rows = batch.num_rows();
        let times = match &input.time {
            Some((column, name)) => Some(time_millis(batch.column(*column).as_ref(), name)?),
            None => None,
        };
        let before = times.as_ref().map(|_| vec![input.watermark; rows]);
        self.driver.receive(Routed::Rows {
            source,
            batch,
            times,
            before,
            after: None,
            now: self.now,
        })
    }

    /// Moves the watermark of every table to `watermark` (epoch ms; never back): timers at
    /// or before it fire, and with ORDER BY the rows it passes reach `eval`.
    pub fn advance_watermark(&mut self, watermark: i64) -> Result<()> {
        if self.inputs.iter().all(|input| input.time.is_none()) {
            return exec_err!("the harness has no `on_time` column, so no watermark");
        }
        for source in 0..self.inputs.len() {
            if self.inputs[source].time.is_some() {
                self.advance_at(source, watermark)?;
            }
        }
        Ok(())
    }

    /// Moves the watermark of table argument `table` only: the processor's watermark, which
    /// fires timers, is the minimum over the tables.
    pub fn advance_table_watermark(&mut self, table: &str, watermark: i64) -> Result<()> {
        let index = self.table_index(table)?;
        if self.inputs[index].time.is_none() {
            return exec_err!("table `{table}` of the harness has no `on_time` column");
        }
        self.advance_at(index, watermark)
    }

    fn advance_at(&mut self, source: usize, watermark: i64) -> Result<()> {
        self.check_open()?;
        let input = &mut self.inputs[source];
        if input.watermark.is_some_and(|w| watermark < w) {
            return exec_err!(
                "the watermark moves forward only: it is {}, not {watermark}",
                input.watermark.unwrap_or_default()
            );
        }
        input.watermark = Some(watermark);
        self.driver.receive(Routed::Rows {
            source,
            batch: RecordBatch::new_empty(input.schema.clone()),
            times: Some(Vec::new()),
            before: Some(Vec::new()),
            after: Some(watermark),
            now: self.now,
        })
    }

    fn table_index(&self, table: &str) -> Result<usize> {
        match self.inputs.iter().position(|input| input.argument == table) {
            Some(index) => Ok(index),
            None => plan_err!(
                "the harness has no table `{table}` (its tables: {})",
                self.table_names()
            ),
        }
    }

    fn table_names(&self) -> String {
        let names: Vec<&str> = self.inputs.iter().map(|i| i.argument.as_str()).collect();
        names.join(", ")
    }

    /// Sets the processing time (epoch ms) later calls run at: state TTL is measured on it.
    pub fn set_processing_time(&mut self, now: i64) {
        self.now = now;
    }

    /// Ends the input (of every table), as a bounded query does: the watermark goes to +∞
    /// and every pending timer fires once, in time order.
    pub fn end_input(&mut self) -> Result<()> {
        self.check_open()?;
        self.ended = true;
        for source in 0..self.inputs.len() {
            self.driver.receive(Routed::End { source })?;
        }
        Ok(())
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
