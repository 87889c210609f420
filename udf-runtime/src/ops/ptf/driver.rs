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
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
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
use super::routed::Routed;
use super::router::Inbox;
use crate::checkpoint::barrier::{Barrier, Flow};
use crate::functions::errors::display_value;
use crate::streaming::sort_buffer::SortBuffer;
use crate::streaming::state::KeyedState;
use crate::streaming::state::disk::items::ViewItems;
use crate::streaming::watermarks::SourceWatermarks;

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

/// One processor at work.
/// Timers firing at `watermark`: those due up to it when it was reached, with ids below
/// `limit`.
#[derive(Debug, Clone, Copy)]
struct FiringUnderWay {
    watermark: i64,
    now: i64,
    limit: u64,
}

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

    /// The processor's output stream: messages from the router in, batches out.
    pub(super) fn run(self, inbox: Inbox, schema: SchemaRef) -> SendableRecordBatchStream {
        let batches = self.run_flow(inbox).filter_map(|flow| {
            std::future::ready(match flow {
                Ok(Flow::Rows(batch)) => Some(Ok(batch)),
                Ok(Flow::Barrier(_)) => None,
                Err(error) => Some(Err(error)),
            })
        });
        Box::pin(RecordBatchStreamAdapter::new(schema, batches))
    }

    /// The processor's output with a barrier after the rows of each checkpoint it saved —
    /// and, at the end of input with checkpoints on, after saving its final state — for a
    /// committing sink.
    pub(super) fn run_flow(self, inbox: Inbox) -> BoxStream<'static, Result<Flow>> {
        futures::stream::unfold((Some(inbox), self), |(mut inbox, mut driver)| async move {
            loop {
                if let Some(batch) = driver.coalescer.next_completed_batch() {
                    return Some((Ok(Flow::Rows(batch)), (inbox, driver)));
                }
                if let Some(barrier) = driver.saved.take() {
                    return Some((Ok(Flow::Barrier(barrier)), (inbox, driver)));
                }
                // Timers due before the next message fire before it (rule 26).
                if driver.firing.is_some() {
                    if let Err(error) = driver.fire_chunk() {
                        return Some((Err(error), (None, driver)));
                    }
                    continue;
                }
                let messages = inbox.as_mut()?;
                let message = if driver.stopped || driver.state.watermarks().all_ended() {
                    None
                } else if driver.coalescer.get_buffered_rows() == 0 {
                    messages.next().await
                } else {
                    // Output waits for a full batch only while input keeps coming: an
                    // unbounded input that pauses still sees what its rows (and timers)
                    // produced.
                    match messages.next().now_or_never() {
                        Some(message) => message,
                        None => {
                            if let Err(error) = driver.coalescer.finish_buffered_batch() {
                                return Some((Err(error.into()), (None, driver)));
                            }
                            continue;
                        }
                    }
                };
                match message {
                    Some(Ok(message)) => {
                        if let Err(error) = driver.take(message) {
                            return Some((Err(error), (None, driver)));
                        }
                    }
                    Some(Err(error)) => return Some((Err(error), (None, driver))),
                    None => {
                        let coordinator = messages.coordinator.clone();
                        inbox = None;
                        // The last call is over.
                        driver.instance.close();
                        if let Err(error) = driver.coalescer.finish_buffered_batch() {
                            return Some((Err(error.into()), (None, driver)));
                        }
                        // Every row and timer is done: the final checkpoint, which a
                        // committing sink commits the last rows with.
                        if !driver.stopped
                            && let Some(barrier) = coordinator.and_then(|c| c.final_barrier())
                        {
                            driver.save(barrier, std::time::Duration::ZERO);
                        }
                    }
                }
            }
        })
        .boxed()
    }

    /// Saves the keyed state for `barrier`'s checkpoint; the barrier follows the rows before
    /// it in the output.
    fn save(&mut self, barrier: Barrier, alignment: std::time::Duration) {
        match self.state.snapshot() {
            Ok(state) => barrier.pending.processor(self.processor, &state, alignment),
            Err(error) => barrier.pending.fail(format!(
                "processor {} of `{}` could not save its state: {error}",
                self.processor, self.call.name
            )),
        }
        self.stopped |= barrier.stop;
        if let Err(error) = self.coalescer.finish_buffered_batch() {
            barrier.pending.fail(format!(
                "processor {} of `{}` could not flush its output: {error}",
                self.processor, self.call.name
            ));
        }
        self.saved = Some(barrier);
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

    /// A batch of table argument `table`, which has ORDER BY: each row waits in the sort
    /// buffer unless it is late (its time at or before the table's watermark: dropped and
    /// counted); whenever the table's watermark moves, the rows it passed go to `eval` — under
    /// the watermarks before the move, as Flink's sort does — and then timers fire. With
    /// several tables each is sorted by its own watermark (as Flink sorts each input); with
    /// one, that is the processor's.
    ///
    /// A row that is not late has a time after every watermark before it, so no earlier
    /// advance could pass it: the batch's rows wait together, and the rows of all its advances
    /// are released together, each under its own advance.
    #[allow(clippy::too_many_arguments)]
    fn receive_ordered(
        &mut self,
        table: usize,
        source: usize,
        batch: &RecordBatch,
        times: Option<Vec<i64>>,
        before: Option<Vec<Option<i64>>>,
        after: Option<i64>,
        now: i64,
    ) -> Result<()> {
        let (Some(times), Some(before)) = (times, before) else {
            return exec_err!("ORDER BY without event time reached `{}`", self.call.name);
        };
        let mut advances: Vec<TableAdvance> = Vec::new();
        let mut waiting: Vec<u32> = Vec::with_capacity(batch.num_rows());
        let mut own = self.table_watermark(table);
        for (row, before) in before.iter().enumerate() {
            if let Some(before) = before {
                own = self.note_advance(table, &mut advances, |w| w.advance(source, *before));
            }
            if own.is_some_and(|w| times[row] <= w) {
                self.metrics.late_rows_dropped.add(1);
                continue;
            }
            waiting.push(row as u32);
        }
        if let Some(sorter) = self.state.sorter_mut(table) {
            sorter.insert(batch, &waiting, &times)?;
        }
        if let Some(after) = after {
            self.note_advance(table, &mut advances, |w| w.advance(source, after));
        }
        self.state.set_now(now);
        self.release_ordered(table, &advances, now)
    }

    /// Applies `change` to the watermarks, noting the advance of `table`'s watermark (with
    /// the processor's before and after) if it moved; the table's watermark after it.
    fn note_advance(
        &mut self,
        table: usize,
        advances: &mut Vec<TableAdvance>,
        change: impl FnOnce(&mut SourceWatermarks),
    ) -> Option<i64> {
        let watermarks = |driver: &Self| {
            let own = driver.table_watermark(table);
            // One table's watermark is the processor's.
            let current = if driver.tables.len() == 1 {
                own
            } else {
                driver.watermark()
            };
            (own, current)
        };
        let (own, current) = watermarks(self);
        change(self.state.watermarks_mut());
        let (after, current_after) = watermarks(self);
        if let Some(own_after) = after
            && after != own
        {
            advances.push(TableAdvance {
                own,
                own_after,
                current,
                current_after,
            });
        }
        after
    }

    /// Hands table `table`'s rows that `advances` passed to `eval`, each under the
    /// watermarks before the advance that passed it, and fires the timers each advance made
    /// due (at the processor's watermark after it) after its rows.
    fn release_ordered(&mut self, table: usize, advances: &[TableAdvance], now: i64) -> Result<()> {
        if advances.is_empty() {
            return Ok(());
        }
        let thresholds: Vec<i64> = advances.iter().map(|a| a.own_after).collect();
        // The advances whose timers have fired, or fire inside the call.
        let mut fired_through = 0;
        let released = match self.state.sorter_mut(table) {
            Some(sorter) => sorter.release(&thresholds)?,
            None => None,
        };
        if let Some(released) = released {
            // One call for all the rows: a row under the watermarks before the advance that
            // passed it; where advances without rows lie between two rows' advances, the
            // timers fire at each of them there (after the rows of the advance before, as if
            // each advance were on its own).
            let under: Vec<Option<i64>> = released
                .advances
                .iter()
                .map(|&a| advances[a].current)
                .collect();
            let mut firings: Vec<Firing> = Vec::new();
            for (row, &advance) in released.advances.iter().enumerate() {
                if advance > fired_through {
                    // Rows of `advance` are under its previous watermark, which fires
                    // before them.
                    firings.extend(advances[fired_through..advance - 1].iter().filter_map(|h| {
                        h.current_after.map(|watermark| Firing { row, watermark })
                    }));
                    fired_through = advance;
                }
            }
            let trace = trace_of(&under, None);
            // With several tables, the rows' own table's watermark before each advance.
            let own: Vec<Option<i64>>;
            let at_start: Vec<Option<i64>>;
            let table_watermarks = if self.tables.len() > 1 {
                own = released.advances.iter().map(|&a| advances[a].own).collect();
                at_start = (0..self.tables.len())
                    .map(|t| self.table_watermark(t))
                    .collect();
                TableWatermarks {
                    at_start: &at_start,
                    own: Some(trace_of(&own, None)),
                }
            } else {
                TableWatermarks::single()
            };
            self.push(
                table,
                &released.batch,
                Some(&released.times),
                trace.with_firings(&firings),
                table_watermarks,
                now,
            )?;
        }
        // The advances after the last rows (or all, without rows) fire after the call.
        for advance in &advances[fired_through..] {
            if let Some(watermark) = advance.current_after {
                self.fire_at(watermark, now)?;
            }
        }
        Ok(())
    }

    /// Starts firing the timers due at the current watermark, if it moved since they last
    /// fired.
    fn start_firing(&mut self, now: i64) {
        if let Some(watermark) = self.watermark() {
            self.start_firing_at(watermark, now);
        }
    }

    /// Fires the timers due at `watermark` before going on.
    fn fire_at(&mut self, watermark: i64, now: i64) -> Result<()> {
        self.start_firing_at(watermark, now);
        while self.fire_chunk()? {}
        Ok(())
    }

    /// Starts firing the timers due at `watermark`, if it is past the one they last fired at
    /// (a firing under way goes first: it is of an earlier watermark).
    fn start_firing_at(&mut self, watermark: i64, now: i64) {
        debug_assert!(self.firing.is_none(), "a firing is under way");
        let timers = self.state.timers_mut();
        if !self.call.spec.on_timer || timers.fired_at().is_some_and(|fired| fired >= watermark) {
            return;
        }
        timers.due(watermark);
        let limit = timers.batch_limit();
        self.firing = Some(FiringUnderWay {
            watermark,
            now,
            limit,
        });
    }

    /// One chunk of the firing under way; whether there is more of it. With the disk
    /// backend, the keys of due timers on disk come back a chunk at a time, each chunk fired
    /// (in order with those in memory) and moved out again before the next, so that firing
    /// millions of timers stays within the budget. Each chunk fires at least one timer of the
    /// batch, which is finite (timers registered meanwhile wait for the next advance).
    fn fire_chunk(&mut self) -> Result<bool> {
        let Some(FiringUnderWay {
            watermark,
            now,
            limit,
        }) = self.firing
        else {
            return Ok(false);
        };
        let bound = self
            .state
            .bring_back_due_timers(watermark, limit, TIMERS_BROUGHT_BACK)?;
        let timers = self.state.timers_mut();
        timers.set_batch_bound(bound);
        if !timers.batch_pending() {
            self.firing = None;
            return Ok(false);
        }
        self.fire_call(watermark, now)?;
        Ok(true)
    }

    /// One `on_timer` call for the timers of the batch due at `watermark` (within its bound).
    fn fire_call(&mut self, watermark: i64, now: i64) -> Result<()> {
        let mut fired = std::mem::take(&mut self.fired);
        fired.clear();
        let mut released = std::mem::take(&mut self.released);
        let mut output = CallOutput::default();
        let (stores, timers) = self.state.call_parts();
        let mut call = TimerCall {
            watermark,
            now,
            state: stores,
            timers,
            emission: Emission {
                sink: &mut output,
                chunk: self.batch_size,
                timer_base: 0,
                fired: &mut fired,
                released: &mut released,
                row: 0,
                in_timer: true,
            },
        };
        let processor = self.instance.processor();
        let outcome = udf_core::catch_user_panic(|| processor.on_timer(&mut call));
        let position = call.emission.position();
        let result = match failure(outcome, " in on_timer") {
            Some(message) => Err(self.timer_failed(&message, &fired, position)),
            None => self.emit(output, 0, &[], &[], &fired),
        };
        self.fired = fired;
        self.state.set_now(now);
        let settled = self.finish_call(released);
        result?;
        settled
    }

    fn timer_failed(
        &self,
        message: &str,
        fired: &[FiredTimer],
        position: Position,
    ) -> DataFusionError {
        let timer = match position {
            Position::Timer(index) => fired.get(index),
            Position::Row(_) => None,
        };
        let (name, time) = timer.map_or(("(unknown)", 0), |t| {
            (t.name.as_deref().unwrap_or("(unnamed)"), t.time)
        });
        let key = timer.map(|t| self.describe_key(t.key)).unwrap_or_default();
        DataFusionError::Execution(format!(
            "process table function `{}` {message} (timer {name} at {time} ms{key})",
            self.call.name
        ))
    }

    /// `, key k => a` for key slot `slot` (nothing without PARTITION BY).
    fn describe_key(&self, slot: u32) -> String {
        let Ok(columns) = self.state.key_arrays(&[slot]) else {
            return String::new();
        };
        // Named as the first table's PARTITION BY names them.
        let names = self.call.tables.first().map_or(&[][..], |t| &t.keys[..]);
        let parts: Vec<String> = columns
            .iter()
            .zip(names)
            .filter_map(|(column, expr)| {
                let value = display_value(column.as_ref(), 0)?;
                let name = match expr {
                    datafusion::logical_expr::Expr::Column(c) => c.name.clone(),
                    other => other.to_string(),
                };
                Some(format!("{name} => {value}"))
            })
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!(", key {}", parts.join(", "))
        }
    }

    /// The output's prefix from a call's key columns: with several tables, each table's
    /// PARTITION BY columns — the same key, in each table's types (Flink's output).
    fn key_prefix(&self, keys: Vec<ArrayRef>) -> Result<Vec<ArrayRef>> {
        if self.tables.len() <= 1 {
            return Ok(keys);
        }
        let mut prefix = Vec::with_capacity(self.prefix_types.len());
        for ty in self.prefix_types.iter() {
            let key = &keys[prefix.len() % keys.len().max(1)];
            prefix.push(if key.data_type() == ty {
                key.clone()
            } else {
                cast(key, ty)?
            });
        }
        Ok(prefix)
    }

    /// The keys and times of fired timers, for the rows they emitted.
    fn timer_columns(&self, fired: &[FiredTimer]) -> Result<(Vec<ArrayRef>, Vec<ArrayRef>)> {
        if fired.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let slots: Vec<u32> = fired.iter().map(|t| t.key).collect();
        let keys = self.key_prefix(self.state.key_arrays(&slots)?)?;
        let times = match &self.time_type {
            Some(time_type) => {
                let tz = match time_type {
                    ArrowType::Timestamp(_, tz) => tz.clone(),
                    _ => None,
                };
                let times =
                    TimestampMillisecondArray::from_iter_values(fired.iter().map(|t| t.time))
                        .with_timezone_opt(tz);
                vec![cast(&times, time_type)?]
            }
            None => Vec::new(),
        };
        Ok((keys, times))
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

/// What EXPLAIN ANALYZE shows of each processor.
pub(super) struct ProcessorMetrics {
    input_rows: Count,
    output_rows: Count,
    /// State entries held after the latest batch.
    state_entries: Gauge,
    /// Keys holding a state slot after the latest batch.
    keys: Gauge,
    /// The most keys that held a slot at once.
    keys_peak: Gauge,
    /// Timers registered after the latest batch.
    timers: Gauge,
    /// Rows dropped by ORDER BY for arriving at or behind the watermark (rule 31 of docs/semantics.md).
    late_rows_dropped: Count,
    /// Rows waiting in the ORDER BY buffer after the latest batch.
    rows_waiting: Gauge,
    /// With the disk backend.
    disk: Option<DiskMetrics>,
    set: ExecutionPlanMetricsSet,
    partition: usize,
}

/// What the disk backend moved and holds, per processor.
struct DiskMetrics {
    /// Keys whose rows found their state in memory (per batch).
    cache_hits: Gauge,
    /// Keys whose state was read back from disk.
    cache_misses: Gauge,
    /// Keys whose state was moved out to disk.
    evictions: Gauge,
    /// View item reads answered in memory.
    item_hits: Gauge,
    /// View item reads that went to the store.
    item_misses: Gauge,
    bytes_read: Gauge,
    bytes_written: Gauge,
    /// Entries in the processor's store (approximate until compaction).
    entries_on_disk: Gauge,
    /// Bytes the processor's store takes on disk.
    disk_bytes: Gauge,
}

impl ProcessorMetrics {
    pub(super) fn new(set: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        ProcessorMetrics {
            input_rows: MetricBuilder::new(set).counter("input_rows", partition),
            output_rows: MetricBuilder::new(set).output_rows(partition),
            state_entries: MetricBuilder::new(set).gauge("state_entries", partition),
            keys: MetricBuilder::new(set).gauge("state_keys", partition),
            keys_peak: MetricBuilder::new(set).gauge("state_keys_peak", partition),
            timers: MetricBuilder::new(set).gauge("timers", partition),
            late_rows_dropped: MetricBuilder::new(set).counter("late_rows_dropped", partition),
            rows_waiting: MetricBuilder::new(set).gauge("rows_waiting", partition),
            disk: None,
            set: set.clone(),
            partition,
        }
    }

    /// Adds the disk backend's metrics.
    fn with_disk(mut self) -> Self {
        let gauge = |name: &'static str| MetricBuilder::new(&self.set).gauge(name, self.partition);
        self.disk = Some(DiskMetrics {
            cache_hits: gauge("state_cache_hits"),
            cache_misses: gauge("state_cache_misses"),
            evictions: gauge("state_evictions"),
            item_hits: gauge("state_item_cache_hits"),
            item_misses: gauge("state_item_cache_misses"),
            bytes_read: gauge("state_bytes_read"),
            bytes_written: gauge("state_bytes_written"),
            entries_on_disk: gauge("state_entries_on_disk"),
            disk_bytes: gauge("state_disk_bytes"),
        });
        self
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
