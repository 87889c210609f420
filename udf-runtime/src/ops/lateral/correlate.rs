//! The join of one partition's input batches with the rows the function emits for them:
//! in input order, in batches of the batch size, NULL rows for LEFT joins.

use std::collections::VecDeque;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch, UInt32Array, new_null_array};
use datafusion::arrow::compute::{BatchCoalescer, take};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result, exec_err};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;
use udf_core::{ArgColumn, AsyncCall, AsyncOptions, Owners, RowSink, TableCall};

use super::call::ResolvedCall;
use super::instance::{Callable, Instance};
use super::node::LateralJoin;
use crate::functions::binding;

pub(super) struct Correlate {
    pub(super) instance: Instance,
    /// `table.exec.async-table.*`, for async functions.
    pub(super) options: AsyncOptions,
    pub(super) args: Vec<Arc<dyn PhysicalExpr>>,
    pub(super) call: ResolvedCall,
    pub(super) join: LateralJoin,
    pub(super) schema: SchemaRef,
    pub(super) batch_size: usize,
    pub(super) coalescer: BatchCoalescer,
    /// Output batches not yet handed on.
    pub(super) ready: VecDeque<RecordBatch>,
    /// The input batch being joined, until every row of it is.
    pub(super) pending: Option<Pending>,
}

/// An input batch whose rows are not all joined yet.
pub(super) struct Pending {
    batch: RecordBatch,
    args: Vec<ArgColumn>,
    /// The first row the next call evaluates.
    start: usize,
    /// The first row not joined yet (LEFT joins).
    next_row: usize,
}

impl Correlate {
    /// Takes the next input batch (the one before must be done).
    pub(super) fn start(&mut self, batch: RecordBatch) -> Result<()> {
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let args = self
            .args
            .iter()
            .map(|expr| match expr.evaluate(&batch)? {
                ColumnarValue::Array(array) => Ok(ArgColumn::array(array)),
                ColumnarValue::Scalar(value) => Ok(ArgColumn::scalar(value.to_array_of_size(1)?)),
            })
            .collect::<Result<Vec<_>>>()?;
        self.pending = Some(Pending {
            batch,
            args,
            start: 0,
            next_row: 0,
        });
        Ok(())
    }

    /// Whether an input batch is still being joined.
    pub(super) fn in_progress(&self) -> bool {
        self.pending.is_some()
    }

    /// Calls the function for the pending batch's rows until a chunk of output is ready (a
    /// sync function pauses there) or a stretch of the batch is done (an async one), so one
    /// input batch's output is never held all at once; joins the rows to what they emitted.
    pub(super) async fn step(&mut self) -> Result<()> {
        let Some(mut pending) = self.pending.take() else {
            return Ok(());
        };
        let rows = pending.batch.num_rows();
        let args = &pending.args;
        let mut sink = JoinSink {
            batch: &pending.batch,
            join: self.join,
            row_is_struct: self.call.row_is_struct(),
            schema: &self.schema,
            next_row: pending.next_row,
            offset: 0,
            joined: Vec::new(),
        };
        let (name, spec, signature) = (
            &self.call.call.name,
            &self.call.call.spec,
            self.call.signature,
        );
        // Where the next call starts, when the batch is not done.
        let paused_at = match self.instance.callable() {
            Callable::Sync(function) => {
                let mut call = TableCall {
                    signature,
                    args,
                    rows,
                    output: &self.call.row_type,
                    start: pending.start,
                    row: pending.start,
                    chunk: self.batch_size,
                    sink: &mut sink,
                    paused_at: None,
                };
                let outcome = udf_core::catch_user_panic(|| function.invoke(&mut call));
                let row = call.row;
                let paused_at = call.paused_at;
                let message = match outcome {
                    Ok(Ok(())) => None,
                    Ok(Err(error)) => Some(format!("failed: {error}")),
                    Err(panic) => Some(format!("panicked: {}", panic)),
                };
                if let Some(message) = message {
                    let values = binding::describe_row(spec, signature, args, row);
                    return exec_err!(
                        "table function `{name}` {message} (row {row} of the batch, arguments: {values})"
                    );
                }
                paused_at
            }
            Callable::Async(function) => {
                // A call takes a stretch of the batch, so what it emits is bounded by the
                // stretch, not the batch; the next stretch starts once this one's calls are
                // all done (none is started twice). Long enough that the in-flight window
                // rarely drains at a stretch's end.
                let stretch = (8 * self.options.max_concurrent_operations).max(1024);
                let (start, end) = (pending.start, (pending.start + stretch).min(rows));
                let part: Vec<ArgColumn> = args
                    .iter()
                    .map(|arg| match arg.is_scalar() {
                        true => arg.clone(),
                        false => ArgColumn::array(arg.array_ref().slice(start, end - start)),
                    })
                    .collect();
                sink.offset = start;
                let call = AsyncCall {
                    signature,
                    args: &part,
                    rows: end - start,
                    output: &self.call.row_type,
                    options: self.options,
                };
                let outcome = udf_core::catch_user_panic_async(function.invoke(
                    call,
                    self.batch_size,
                    &mut sink,
                ))
                .await;
                match outcome {
                    Ok(Ok(())) => {}
                    Ok(Err(mut failure)) => {
                        failure.row = failure.row.map(|row| row + start);
                        let error = binding::async_failure(name, spec, signature, args, failure);
                        return Err(error);
                    }
                    Err(panic) => {
                        return exec_err!("table function `{name}` panicked: {}", panic);
                    }
                }
                (end < rows).then_some(end)
            }
        };
        if paused_at.is_none() {
            sink.finish()
                .map_err(|e| DataFusionError::Execution(e.to_string()))?;
        }
        let next_row = sink.next_row;
        for joined in std::mem::take(&mut sink.joined) {
            self.emit(joined)?;
        }
        // A paused call resumes at the next step (after its last row, the next call only
        // adds a LEFT join's trailing rows).
        if let Some(start) = paused_at {
            pending.start = start;
            pending.next_row = next_row;
            self.pending = Some(pending);
        }
        Ok(())
    }

    /// Batches of exactly the batch size pass through; others are gathered until one is full.
    fn emit(&mut self, batch: RecordBatch) -> Result<()> {
        if batch.num_rows() == self.batch_size && self.coalescer.is_empty() {
            self.ready.push_back(batch);
        } else {
            self.coalescer.push_batch(batch)?;
            while let Some(batch) = self.coalescer.next_completed_batch() {
                self.ready.push_back(batch);
            }
        }
        Ok(())
    }

    /// Hands on what is gathered (the end of input).
    pub(super) fn finish(&mut self) -> Result<()> {
        self.coalescer.finish_buffered_batch()?;
        while let Some(batch) = self.coalescer.next_completed_batch() {
            self.ready.push_back(batch);
        }
        Ok(())
    }
}

/// Joins each chunk of emitted rows to the input rows that emitted them. For a LEFT join,
/// input rows that emitted nothing get one row with NULL function columns, in input order.
struct JoinSink<'a> {
    batch: &'a RecordBatch,
    join: LateralJoin,
    row_is_struct: bool,
    schema: &'a SchemaRef,
    /// The first input row not yet joined (LEFT joins).
    next_row: usize,
    /// The batch row of the call's first row (an async call takes a stretch of the batch).
    offset: usize,
    joined: Vec<RecordBatch>,
}

impl JoinSink<'_> {
    fn function_columns(&self, rows: &ArrayRef) -> Vec<ArrayRef> {
        if self.row_is_struct {
            rows.as_struct().columns().to_vec()
        } else {
            vec![rows.clone()]
        }
    }

    fn assemble(
        &mut self,
        input_rows: &UInt32Array,
        function: Vec<ArrayRef>,
    ) -> Result<(), udf_core::Error> {
        let mut columns = Vec::with_capacity(self.schema.fields().len());
        for column in self.batch.columns() {
            columns.push(take(column.as_ref(), input_rows, None)?);
        }
        columns.extend(function);
        self.joined
            .push(RecordBatch::try_new(self.schema.clone(), columns)?);
        Ok(())
    }

    /// Input rows from `next_row` on that emitted nothing, with NULL function columns.
    fn finish(&mut self) -> Result<(), udf_core::Error> {
        let rows = self.batch.num_rows();
        if self.join == LateralJoin::Inner || self.next_row >= rows {
            return Ok(());
        }
        let input_rows = UInt32Array::from_iter_values(self.next_row as u32..rows as u32);
        let width = self.batch.num_columns();
        let function = self.schema.fields()[width..]
            .iter()
            .map(|f| new_null_array(f.data_type(), input_rows.len()))
            .collect();
        self.next_row = rows;
        self.assemble(&input_rows, function)
    }
}

impl RowSink for JoinSink<'_> {
    /// A chunk joined is a batch ready to go on: the call pauses so it goes now.
    fn is_full(&self) -> bool {
        !self.joined.is_empty()
    }

    fn accept(&mut self, rows: ArrayRef, owners: Owners) -> Result<(), udf_core::Error> {
        let function = self.function_columns(&rows);
        match self.join {
            LateralJoin::Inner => {
                let offset = self.offset;
                let input_rows =
                    UInt32Array::from_iter_values(owners.iter().map(|o| (o + offset) as u32));
                self.assemble(&input_rows, function)
            }
            LateralJoin::Left => {
                let mut input_rows = Vec::with_capacity(owners.len());
                let mut emitted = Vec::with_capacity(owners.len());
                for (index, owner) in owners.iter().map(|o| o + self.offset).enumerate() {
                    // Rows skipped since the last owner emitted nothing.
                    while self.next_row < owner {
                        input_rows.push(self.next_row as u32);
                        emitted.push(None);
                        self.next_row += 1;
                    }
                    self.next_row = self.next_row.max(owner + 1);
                    input_rows.push(owner as u32);
                    emitted.push(Some(index as u32));
                }
                let emitted = UInt32Array::from(emitted);
                let function = function
                    .iter()
                    .map(|column| take(column.as_ref(), &emitted, None))
                    .collect::<Result<Vec<_>, _>>()?;
                self.assemble(&UInt32Array::from(input_rows), function)
            }
        }
    }
}
