//! One virtual processor at work: it takes the router's messages, moves its watermark,
//! calls `eval` on each message's rows in one call (with the watermark of each row, so the
//! function's loop fires the timers due between rows), fires timers, releases ORDER BY rows,
//! and hands output batches on. What it keeps per key is its keyed-state unit.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StructArray, TimestampMillisecondArray};
use datafusion::arrow::compute::{BatchCoalescer, SortOptions, cast};
use datafusion::arrow::datatypes::{DataType as ArrowType, Field, Fields, SchemaRef};
use datafusion::common::{DataFusionError, Result, exec_err, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, Gauge, MetricBuilder};
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use udf_core::ptf::{
    CallInfo, Emission, FiredTimer, Firing, Position, ProcessCall, ProcessorSetup, Rows,
    StateBackend, TableSemantics, TableWatermarks, TimerCall, Timers, WatermarkTrace,
};
use udf_core::types::DataType;
use udf_core::{ArgColumn, Semantics};

use super::call::PtfCall;
use super::disk_run::{DiskShare, has_views};
use super::input::PtfInput;
use super::instance::Instance;
use super::output::{CallOutput, Origins};
use crate::changelog;
use crate::checkpoint::barrier::{Barrier, Flow};
use crate::functions::errors::display_value;
use crate::ops::routing::routed::Routed;
use crate::ops::routing::router::Inbox;
use crate::streaming::sort_buffer::SortBuffer;
use crate::streaming::state::disk::items::ViewItems;
use crate::streaming::state::{KeepKeys, KeyedState, RestorePart};
use crate::streaming::watermarks::SourceWatermarks;

mod flow;
mod metrics;
mod ordered;
mod timers;

pub(super) use metrics::ProcessorMetrics;

/// How many due timers on disk one `on_timer` call brings back (their keys come back to
/// memory for it, beyond the budget until the call's keys move out again).
const TIMERS_BROUGHT_BACK: usize = 4096;

/// Which input columns precede the function's in the output.
#[derive(Clone, Copy)]
enum Prefix {
    None,
    Keys,
    AllColumns,
}

fn prefix_of(call: &PtfCall) -> Prefix {
    match call.tables.first() {
        Some(table) if table.pass_through => Prefix::AllColumns,
        Some(table) if table.semantics == Semantics::Set => Prefix::Keys,
        _ => Prefix::None,
    }
}

/// What `Context::table_semantics_for` reports of each table argument.
fn call_info(call: &PtfCall, tables: &[DriverTable]) -> Result<CallInfo> {
    let tables = call
        .tables
        .iter()
        .zip(tables)
        .map(|(table, driven)| {
            // A typed argument reports its declared type; a polymorphic one the table's.
            let declared = call
                .spec
                .table_args()
                .find(|(_, spec, _)| spec.name == table.name)
                .and_then(|(_, _, arg)| arg.row.clone());
            let data_type = match declared {
                Some(declared) => declared,
                None => DataType::from_arrow(&ArrowType::Struct(driven.row_fields.clone()))
                    .map_err(|e| DataFusionError::Plan(format!("`{}`: {e}", call.name)))?
                    .not_null(),
            };
            Ok(TableSemantics {
                name: table.name.clone(),
                data_type,
                partition_by_columns: table.key_positions.clone(),
                order_by_columns: table
                    .order_names
                    .iter()
                    .filter_map(|name| position_in_row(table, name))
                    .collect(),
                time_column: table
                    .event_time
                    .as_ref()
                    .filter(|_| call.on_time)
                    .and_then(|t| position_in_row(table, &t.name)),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(CallInfo {
        function: call.name.clone(),
        tables,
        state: call.spec.state.iter().map(|s| s.name.clone()).collect(),
        on_timer: call.spec.on_timer,
    })
}

/// The watermarks of a call's rows: per row where they move, else one (`fallback` for a
/// call without row watermarks). Watermarks never move back, so equal ends mean one value.
fn trace_of(per_row: &[Option<i64>], fallback: Option<i64>) -> WatermarkTrace<'_> {
    match per_row.first() {
        Some(first) if per_row.last() == Some(first) => WatermarkTrace::constant(*first),
        Some(_) => WatermarkTrace::per_row(per_row),
        None => WatermarkTrace::constant(fallback),
    }
}

/// Where column `name` of the table is in the row the function reads (if it reads it).
fn position_in_row(table: &super::call::TableBinding, name: &str) -> Option<usize> {
    table
        .row_names
        .iter()
        .position(|n| n.eq_ignore_ascii_case(name))
}

/// What a processor knows of one of its inputs (a table argument, or the empty row of a
/// function without one).
struct DriverTable {
    keys: Vec<Arc<dyn PhysicalExpr>>,
    row: Vec<Arc<dyn PhysicalExpr>>,
    row_fields: Fields,
    /// The row-kind column of a changelog table argument.
    kinds: Option<Arc<dyn PhysicalExpr>>,
    /// The input column of `rowtime`, with `on_time`.
    time_column: Option<usize>,
    /// The sources (numbered across the inputs) of this input's partitions.
    sources: std::ops::Range<usize>,
}

/// An advance of one table's watermark, with the processor's before and after it.
#[derive(Clone, Copy)]
struct TableAdvance {
    own: Option<i64>,
    own_after: i64,
    current: Option<i64>,
    current_after: Option<i64>,
}

/// Timers firing at `watermark`: those due up to it when it was reached, with ids below
/// `limit`.
#[derive(Debug, Clone, Copy)]
struct FiringUnderWay {
    watermark: i64,
    now: i64,
    limit: u64,
}

/// One processor at work.
pub(super) struct Driver {
    call: PtfCall,
    /// The inputs, in table-argument order.
    tables: Vec<DriverTable>,
    /// The input each source belongs to.
    table_of_source: Vec<usize>,
    prefix: Prefix,
    /// The output types of the prefix columns (with several tables, each table's keys).
    prefix_types: Vec<ArrowType>,
    schema: SchemaRef,
    batch_size: usize,
    coalescer: BatchCoalescer,
    instance: Instance,
    /// Everything kept per key: state, timers, waiting rows, watermarks.
    state: KeyedState,
    metrics: ProcessorMetrics,
    /// The type of `rowtime`, with `on_time`.
    time_type: Option<ArrowType>,
    /// The timers fired by the latest call (reused).
    fired: Vec<FiredTimer>,
    /// Key slots the latest call left without state (reused).
    released: Vec<u32>,
    /// The key slot of each row of the latest batch (reused).
    slots: Vec<u32>,
    /// The watermark while each row of the latest batch was processed (reused).
    row_watermarks: Vec<Option<i64>>,
    /// With several tables, the batch's own table's watermark at each row (reused).
    own_watermarks: Vec<Option<i64>>,
    /// Every timer fired, with its key's values, when the test harness asks for them.
    pub(super) timer_log: Option<Vec<(Vec<ArrayRef>, FiredTimer)>>,
    /// The firing under way after a message, if any: the output stream yields what each of
    /// its chunks emits before the next, so firing millions of timers at once never holds
    /// all their rows.
    firing: Option<FiringUnderWay>,
    /// This processor's number among the exec's.
    pub(super) processor: usize,
    /// Stopped at a savepoint: no more input, and no end of input.
    stopped: bool,
    /// The checkpoint just saved: its barrier goes out after the rows before it.
    saved: Option<Barrier>,
}

impl Driver {
    /// Processor `partition`'s driver: its function instance (opened if the function has
    /// `open`), state, timers and buffers; `sources` partitions of each input feed it.
    pub(super) fn new(
        call: &PtfCall,
        inputs: &[PtfInput],
        schema: &SchemaRef,
        metrics: ProcessorMetrics,
        context: &TaskContext,
        sources: &[usize],
        disk: Option<DiskShare>,
    ) -> Result<Self> {
        let mut tables = Vec::with_capacity(inputs.len());
        let mut table_of_source = Vec::new();
        for (index, input) in inputs.iter().enumerate() {
            let input_schema = input.plan.schema();
            let row_fields: Fields = input
                .row
                .iter()
                .zip(call.tables.get(index).iter().flat_map(|t| &t.row_names))
                .map(|(expr, name)| {
                    Ok(Field::new(
                        name,
                        expr.data_type(&input_schema)?,
                        expr.nullable(&input_schema)?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?
                .into();
            let count = sources.get(index).copied().unwrap_or(1);
            let first = table_of_source.len();
            table_of_source.extend(std::iter::repeat_n(index, count));
            tables.push(DriverTable {
                keys: input.keys.clone(),
                row: input.row.clone(),
                row_fields,
                kinds: input.kinds.clone(),
                time_column: call
                    .tables
                    .get(index)
                    .and_then(|t| t.event_time.as_ref())
                    .filter(|_| call.on_time)
                    .map(|t| t.column),
                sources: first..table_of_source.len(),
            });
        }
        let input_schema = inputs[0].plan.schema();
        let keys = &inputs[0].keys;
        let key_types = keys
            .iter()
            .map(|k| k.data_type(&input_schema))
            .collect::<Result<Vec<_>>>()?;
        let info = Arc::new(call_info(call, &tables)?);
        let scalars = call
            .scalars
            .iter()
            .map(|value| Ok(ArgColumn::scalar(value.to_array_of_size(1)?)))
            .collect::<Result<Vec<_>>>()?;
        // With the disk backend, views read and write the processor's keyspace of items (none
        // is opened for a function without views).
        let disk = disk
            .map(|share| {
                let store = share.run.processor(share.processor)?;
                let items = match has_views(call) {
                    true => share.run.items(share.processor)?,
                    false => store.clone(),
                };
                let views = Arc::new(ViewItems::new(items, share.views_budget));
                Ok::<_, DataFusionError>((store, share, views))
            })
            .transpose()?;
        let views = disk.as_ref().map(|(_, _, views)| views.clone());
        let backend = match &views {
            Some(views) => StateBackend::Items(views.clone()),
            None => StateBackend::InMemory,
        };
        let setup = ProcessorSetup {
            output: call.row_type.clone(),
            scalars,
            info,
            state: call.spec.state.clone(),
            backend,
        };
        let mut instance = Instance::open(call, context.session_config().options(), setup)?;
        let stores = instance
            .processor()
            .new_state()
            .map_err(|e| DataFusionError::Execution(format!("`{}`: {e}", call.name)))?;
        // An ORDER BY buffer per table argument with ORDER BY.
        let mut sorters = Vec::with_capacity(inputs.len());
        for (input, table) in inputs.iter().zip(&call.tables) {
            if table.order_by.is_empty() {
                sorters.push(None);
                continue;
            }
            let schema = input.plan.schema();
            let ties = table.order_by[1..]
                .iter()
                .map(|(column, descending, nulls_first)| {
                    let options = SortOptions {
                        descending: *descending,
                        nulls_first: *nulls_first,
                    };
                    (*column, schema.field(*column).data_type().clone(), options)
                })
                .collect::<Vec<_>>();
            sorters.push(Some(SortBuffer::new(
                input.keys.clone(),
                &key_types,
                &ties,
            )?));
        }
        let mut state = KeyedState::new(
            &call.name,
            &key_types,
            call.spec.state.clone(),
            stores,
            sorters,
            table_of_source.len(),
        )?;
        let mut metrics = metrics;
        if let Some((store, share, views)) = disk {
            state = state.with_disk(share.run, store, share.budget, views)?;
            metrics = metrics.with_disk();
        }
        let prefix = prefix_of(call);
        let prefix_types = match prefix {
            Prefix::Keys => {
                let count: usize = call.tables.iter().map(|t| t.keys.len()).sum();
                schema.fields()[..count]
                    .iter()
                    .map(|f| f.data_type().clone())
                    .collect()
            }
            Prefix::None | Prefix::AllColumns => Vec::new(),
        };
        let batch_size = context.session_config().batch_size();
        Ok(Driver {
            call: call.clone(),
            tables,
            table_of_source,
            prefix,
            prefix_types,
            schema: schema.clone(),
            batch_size,
            // Batches of at least half the batch size go on as they are, without a copy.
            coalescer: BatchCoalescer::new(schema.clone(), batch_size)
                .with_biggest_coalesce_batch_size(Some(batch_size / 2)),
            instance,
            state,
            metrics,
            time_type: call
                .event_time()
                .filter(|_| call.on_time)
                .map(|t| input_schema.field(t.column).data_type().clone()),
            fired: Vec::new(),
            released: Vec::new(),
            slots: Vec::new(),
            row_watermarks: Vec::new(),
            own_watermarks: Vec::new(),
            timer_log: None,
            firing: None,
            processor: 0,
            stopped: false,
            saved: None,
        })
    }

    /// The processor's watermark: the minimum over its input partitions, once every one has
    /// reported (rule 25 of docs/semantics.md).
    fn watermark(&self) -> Option<i64> {
        self.state.watermarks().current()
    }

    /// Table argument `table`'s watermark: the minimum over its input partitions.
    fn table_watermark(&self, table: usize) -> Option<i64> {
        let sources = self.tables[table].sources.clone();
        self.state.watermarks().current_of(sources)
    }

    /// Moves `source`'s watermark forward (never back).
    fn advance(&mut self, source: usize, watermark: i64) {
        self.state.watermarks_mut().advance(source, watermark);
    }

    /// Takes one message of the router and fires every timer it made due.
    pub(super) fn receive(&mut self, message: Routed) -> Result<()> {
        self.take(message)?;
        while self.fire_chunk()? {}
        Ok(())
    }

    /// Takes one message of the router: its rows in one call, each under the watermark in
    /// force before it. The timers due after it are left for `fire_chunk`.
    fn take(&mut self, message: Routed) -> Result<()> {
        match message {
            Routed::Rows {
                source,
                batch,
                times,
                before,
                after,
                now,
            } => {
                let table = self.table_of_source[source];
                if self.state.is_ordered(table) {
                    return self.receive_ordered(table, source, &batch, times, before, after, now);
                }
                let several = self.tables.len() > 1;
                // Each table's watermark before the batch (only the batch's own moves in it).
                let at_start: Vec<Option<i64>> = if several {
                    (0..self.tables.len())
                        .map(|t| self.table_watermark(t))
                        .collect()
                } else {
                    Vec::new()
                };
                // The watermark while each row is processed; where it moves, the function
                // fires the timers it made due before the row (rule 26 of docs/semantics.md).
                let mut watermarks = std::mem::take(&mut self.row_watermarks);
                let mut own = std::mem::take(&mut self.own_watermarks);
                watermarks.clear();
                own.clear();
                if let Some(before) = &before {
                    for before in before {
                        if let Some(before) = before {
                            self.advance(source, *before);
                        }
                        watermarks.push(self.watermark());
                        if several {
                            own.push(self.table_watermark(table));
                        }
                    }
                }
                let trace = trace_of(&watermarks, self.watermark());
                let table_watermarks = if several {
                    TableWatermarks {
                        at_start: &at_start,
                        own: Some(trace_of(&own, at_start[table])),
                    }
                } else {
                    TableWatermarks::single()
                };
                let pushed = self.push(
                    table,
                    &batch,
                    times.as_deref(),
                    trace,
                    table_watermarks,
                    now,
                );
                self.row_watermarks = watermarks;
                self.own_watermarks = own;
                pushed?;
                if let Some(after) = after {
                    self.advance(source, after);
                    self.start_firing(now);
                }
            }
            Routed::Checkpoint { barrier, alignment } => {
                // Every source's rows before the checkpoint are in, none after: save.
                self.save(barrier, alignment);
            }
            Routed::Barrier { .. } => {
                return internal_err!("a checkpoint barrier reached a processor before alignment");
            }
            Routed::End { source } => {
                let table = self.table_of_source[source];
                let mut advances = Vec::new();
                self.note_advance(table, &mut advances, |w| w.end(source));
                let now = self.state.now();
                if self.state.is_ordered(table) {
                    self.release_ordered(table, &advances, now)?;
                }
                // At the end every pending timer fires once, in time order (rule 29 of
                // docs/semantics.md).
                self.start_firing(now);
            }
        }
        Ok(())
    }

    /// Turns what a call emitted into output batches: owners below `rows` are input rows
    /// (with `prefix` and `suffix`), the others `fired` timers.
    fn emit(
        &mut self,
        output: CallOutput,
        rows: usize,
        prefix: &[ArrayRef],
        suffix: &[ArrayRef],
        fired: &[FiredTimer],
    ) -> Result<()> {
        let (timer_prefix, timer_suffix) = self.timer_columns(fired)?;
        if let Some(log) = &mut self.timer_log {
            for timer in fired {
                log.push((self.state.key_arrays(&[timer.key])?, timer.clone()));
            }
        }
        let origins = Origins {
            rows,
            fired: fired.len(),
            prefix,
            suffix,
            timer_prefix: &timer_prefix,
            timer_suffix: &timer_suffix,
        };
        let row_is_struct = self.call.row_is_struct();
        for (function_rows, owners) in output.chunks {
            let batch = origins.batch(function_rows, &owners, row_is_struct, &self.schema)?;
            self.metrics.output_rows.add(batch.num_rows());
            self.coalescer.push_batch(batch)?;
        }
        Ok(())
    }

    /// After a call: frees the slots of keys left without state or timers (the timers of a
    /// key fired after its state emptied keep its key for the timers' rows until then), and
    /// updates the gauges.
    fn finish_call(&mut self, mut released: Vec<u32>) -> Result<()> {
        let settled = self
            .state
            .release(&mut released)
            .and_then(|()| self.state.settle());
        self.released = released;
        self.metrics.state_entries.set(self.state.entries_held());
        let keys = self.state.keys_held();
        self.metrics.keys.set(keys);
        self.metrics.keys_peak.set_max(keys);
        self.metrics.timers.set(self.state.timers_held());
        self.metrics.rows_waiting.set(self.state.rows_waiting());
        if let (Some(gauges), Some(disk)) = (&self.metrics.disk, self.state.disk()) {
            let counts = disk.counts();
            gauges.cache_hits.set(counts.hits);
            gauges.cache_misses.set(counts.loads);
            gauges.evictions.set(counts.evictions);
            let items = disk.views().counts();
            gauges.item_hits.set(items.hits);
            gauges.item_misses.set(items.misses);
            let totals = disk.store_totals();
            gauges.bytes_read.set(totals.bytes_read as usize);
            gauges.bytes_written.set(totals.bytes_written as usize);
            gauges.entries_on_disk.set(totals.entries);
            gauges.disk_bytes.set(totals.disk_bytes as usize);
        }
        settled
    }

    /// Calls `eval` for every row of `batch` (of input `table`), under the watermarks of
    /// `trace`; timers fire before a row at its watermark and at the trace's firings.
    fn push(
        &mut self,
        table: usize,
        batch: &RecordBatch,
        times: Option<&[i64]>,
        trace: WatermarkTrace<'_>,
        table_watermarks: TableWatermarks<'_>,
        now: i64,
    ) -> Result<()> {
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        // Row times reach the function (and `rowtime`) only when the call names `on_time`.
        let times = times.filter(|_| self.call.on_time);
        let evaluate = |exprs: &[Arc<dyn PhysicalExpr>]| {
            exprs
                .iter()
                .map(|e| e.evaluate(batch)?.into_array(rows))
                .collect::<Result<Vec<ArrayRef>>>()
        };
        let input = &self.tables[table];
        let keys = evaluate(&input.keys)?;
        let kinds = match &input.kinds {
            Some(column) => Some(changelog::kinds(
                &column.evaluate(batch)?.into_array(rows)?,
                &format!("the changelog read by `{}`", self.call.name),
            )?),
            None => None,
        };
        let mut slots = std::mem::take(&mut self.slots);
        if self.call.keyed() {
            self.state.slots(&keys, rows, &mut slots)?;
        }
        if self.call.spec.on_timer
            && let Some(highest) = trace.highest()
            && self
                .state
                .timers_mut()
                .fired_at()
                .is_none_or(|fired| highest > fired)
        {
            // Timers the call may fire that wait on disk come back with their keys first (all
            // of them: a call fires what it found due; see `fire_at` for the chunked way).
            self.state
                .bring_back_due_timers(highest, u64::MAX, usize::MAX)?;
        }
        let argument = match self.call.tables.get(table) {
            Some(_) => Some(ArgColumn::array(Arc::new(StructArray::try_new(
                input.row_fields.clone(),
                evaluate(&input.row)?,
                None,
            )?))),
            None => None,
        };
        // `rowtime`: the emitting row's time.
        let suffix: Vec<ArrayRef> = input
            .time_column
            .iter()
            .map(|column| batch.column(*column).clone())
            .collect();
        let prefix: Vec<ArrayRef> = match self.prefix {
            Prefix::None => Vec::new(),
            Prefix::Keys => self.key_prefix(keys)?,
            Prefix::AllColumns => batch.columns().to_vec(),
        };
        let mut output = CallOutput::default();
        let mut fired = std::mem::take(&mut self.fired);
        fired.clear();
        let mut released = std::mem::take(&mut self.released);
        let (stores, timers) = self.state.call_parts();
        let mut call = ProcessCall {
            rows: Rows {
                table: argument.as_ref(),
                table_index: table,
                count: rows,
                keys: &slots,
                times,
                kinds: kinds.as_deref(),
            },
            watermarks: trace,
            table_watermarks,
            now,
            state: stores,
            timers: timers as &mut dyn Timers,
            emission: Emission {
                sink: &mut output,
                chunk: self.batch_size,
                timer_base: rows,
                fired: &mut fired,
                released: &mut released,
                row: 0,
                in_timer: false,
            },
        };
        let processor = self.instance.processor();
        let outcome = udf_core::catch_user_panic(|| processor.process(&mut call));
        let position = call.emission.position();
        // Past the rows: a timer that fired between them.
        let place = match position {
            Position::Timer(_) => " in on_timer",
            Position::Row(_) => "",
        };
        let result = match (failure(outcome, place), position) {
            (None, _) => self.emit(output, rows, &prefix, &suffix, &fired),
            (Some(message), Position::Timer(_)) => {
                Err(self.timer_failed(&message, &fired, position))
            }
            (Some(message), Position::Row(row)) => {
                let values = describe_input_row(argument.as_ref(), row);
                exec_err!(
                    "process table function `{}` {message} (row {row} of the batch{values})",
                    self.call.name
                )
            }
        };
        self.fired = fired;
        self.slots = slots;
        // Before keys move out: their stamp on disk must be no earlier than this call's writes.
        self.state.set_now(now);
        let settled = self.finish_call(released);
        result?;
        settled?;
        self.metrics.input_rows.add(rows);
        Ok(())
    }

    /// The processor's keyed state as bytes (see `KeyedState::snapshot`).
    #[cfg(test)]
    pub(super) fn snapshot(&self) -> Result<Vec<u8>> {
        self.state.snapshot()
    }

    /// Takes the keyed state of a snapshot (a fresh driver only).
    pub(super) fn restore(&mut self, snapshot: &[u8]) -> Result<()> {
        self.state.restore(snapshot)
    }

    /// Takes this processor's keys of snapshot `index` of a run with another processor count
    /// (see `KeyedState::restore_part`): the keys `keep` picks, and the waiting rows whose
    /// PARTITION BY values it picks.
    pub(super) fn restore_part(
        &mut self,
        snapshot: &[u8],
        index: usize,
        keep: &KeepKeys<'_>,
    ) -> Result<()> {
        let tables = &self.tables;
        let rows = |table: usize, batch: &RecordBatch| -> Result<Vec<bool>> {
            let Some(table) = tables.get(table) else {
                return internal_err!("rows waiting for table argument {} of none", table + 1);
            };
            let keys = table
                .keys
                .iter()
                .map(|key| key.evaluate(batch)?.into_array(batch.num_rows()))
                .collect::<Result<Vec<_>>>()?;
            keep(&keys, batch.num_rows())
        };
        let part = RestorePart {
            index,
            keep,
            rows: &rows,
        };
        self.state.restore_part(snapshot, part)
    }

    /// The output batches produced so far (complete or not).
    pub(super) fn take_output(&mut self) -> Result<Vec<RecordBatch>> {
        self.coalescer.finish_buffered_batch()?;
        let mut batches = Vec::new();
        while let Some(batch) = self.coalescer.next_completed_batch() {
            batches.push(batch);
        }
        Ok(batches)
    }

    pub(super) fn state(&self) -> &KeyedState {
        &self.state
    }

    #[cfg(test)]
    pub(super) fn state_mut(&mut self) -> &mut KeyedState {
        &mut self.state
    }
}

/// What went wrong in a call of the function, if anything: `failed{place}: ...` or
/// `panicked{place}: ...`.
fn failure(outcome: Result<udf_core::Result<()>, udf_core::Panic>, place: &str) -> Option<String> {
    match outcome {
        Ok(Ok(())) => None,
        Ok(Err(error)) => Some(format!("failed{place}: {error}")),
        Err(panic) => Some(format!("panicked{place}: {}", panic)),
    }
}

/// `, input: (a, 1)` for the row being processed.
fn describe_input_row(table: Option<&ArgColumn>, row: usize) -> String {
    table
        .and_then(|table| display_value(table.values(), row))
        .map(|value| format!(", input row: {value}"))
        .unwrap_or_default()
}
