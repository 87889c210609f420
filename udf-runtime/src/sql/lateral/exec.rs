//! `LateralExec`: evaluates a table function for every input row and joins each row to the
//! rows it emitted, in input order. Output comes in batches of the session's batch size.

use std::collections::VecDeque;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch, UInt32Array, new_null_array};
use datafusion::arrow::compute::{BatchCoalescer, take};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, exec_err, internal_err};
use datafusion::config::ConfigOptions;
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{EmissionType, apply_expression_roots};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::{Stream, StreamExt};
use udf_core::{ArgColumn, FunctionContext, RowSink, TableCall, TableFunction};

use super::call::ResolvedCall;
use super::node::LateralJoin;
use crate::sql::binding;
use crate::sql::config::JobParameters;

#[derive(Debug)]
pub struct LateralExec {
    input: Arc<dyn ExecutionPlan>,
    args: Vec<Arc<dyn PhysicalExpr>>,
    call: ResolvedCall,
    join: LateralJoin,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl LateralExec {
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        args: Vec<Arc<dyn PhysicalExpr>>,
        call: ResolvedCall,
        join: LateralJoin,
        schema: SchemaRef,
    ) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(input.output_partitioning().partition_count()),
            EmissionType::Incremental,
            input.boundedness(),
        ));
        LateralExec {
            input,
            args,
            call,
            join,
            schema,
            properties,
        }
    }
}

impl DisplayAs for LateralExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let join = match self.join {
            LateralJoin::Inner => "inner",
            LateralJoin::Left => "left",
        };
        write!(
            f,
            "LateralExec: {}({}) join={join}",
            self.call.call.name,
            args.join(", ")
        )
    }
}

impl ExecutionPlan for LateralExec {
    fn name(&self) -> &str {
        "LateralExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    /// Rows come out in input order; spreading one partition over several would lose it.
    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        apply_expression_roots(self.args.iter(), f)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("LateralExec takes one input");
        }
        Ok(Arc::new(LateralExec::new(
            children.swap_remove(0),
            self.args.clone(),
            self.call.clone(),
            self.join,
            self.schema.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let batch_size = context.session_config().batch_size();
        let instance = Instance::open(&self.call, context.session_config().options())?;
        let input = self.input.execute(partition, context)?;
        Ok(Box::pin(LateralStream {
            input,
            input_done: false,
            correlate: Correlate {
                instance,
                args: self.args.clone(),
                call: self.call.clone(),
                join: self.join,
                schema: self.schema.clone(),
                batch_size,
                coalescer: BatchCoalescer::new(self.schema.clone(), batch_size),
                ready: VecDeque::new(),
            },
        }))
    }
}

/// The function instance a partition calls: shared, or its own copy, opened with the
/// query's job parameters and closed when the stream is dropped.
enum Instance {
    Shared(Arc<dyn TableFunction>),
    Opened(Box<dyn TableFunction>),
}

impl Instance {
    fn open(call: &ResolvedCall, options: &ConfigOptions) -> Result<Instance> {
        let name = &call.call.name;
        let Some(mut instance) = call.call.function.instantiate() else {
            return Ok(Instance::Shared(call.call.function.clone()));
        };
        let context = FunctionContext::new(
            name.as_str(),
            JobParameters::of(options),
            call.call.metrics.clone(),
        );
        match catch_unwind(AssertUnwindSafe(|| instance.open(&context))) {
            Ok(Ok(())) => Ok(Instance::Opened(instance)),
            Ok(Err(error)) => exec_err!("function `{name}` failed to open: {error}"),
            Err(panic) => exec_err!(
                "function `{name}` panicked in open: {}",
                binding::panic_message(&panic)
            ),
        }
    }

    fn get(&self) -> &dyn TableFunction {
        match self {
            Instance::Shared(function) => function.as_ref(),
            Instance::Opened(function) => function.as_ref(),
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Instance::Opened(instance) = self {
            // A panic in `close` must not abort the process while the query is torn down.
            let _ = catch_unwind(AssertUnwindSafe(|| instance.close()));
        }
    }
}

/// The join of one partition's input batches with the rows the function emits.
struct Correlate {
    instance: Instance,
    args: Vec<Arc<dyn PhysicalExpr>>,
    call: ResolvedCall,
    join: LateralJoin,
    schema: SchemaRef,
    batch_size: usize,
    coalescer: BatchCoalescer,
    ready: VecDeque<RecordBatch>,
}

impl Correlate {
    /// Calls the function for every row of `batch` and joins the rows to what they emitted.
    fn push(&mut self, batch: &RecordBatch) -> Result<()> {
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let args = self
            .args
            .iter()
            .map(|expr| match expr.evaluate(batch)? {
                ColumnarValue::Array(array) => Ok(ArgColumn::array(array)),
                ColumnarValue::Scalar(value) => Ok(ArgColumn::scalar(value.to_array_of_size(1)?)),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut sink = JoinSink {
            batch,
            join: self.join,
            row_is_struct: self.call.row_is_struct(),
            schema: &self.schema,
            next_row: 0,
            joined: Vec::new(),
        };
        let mut call = TableCall {
            signature: self.call.signature,
            args: &args,
            rows,
            output: &self.call.row_type,
            row: 0,
            chunk: self.batch_size,
            sink: &mut sink,
        };
        let function = self.instance.get();
        let outcome = catch_unwind(AssertUnwindSafe(|| function.invoke(&mut call)));
        let row = call.row;
        let message = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(format!("failed: {error}")),
            Err(panic) => Some(format!("panicked: {}", binding::panic_message(&panic))),
        };
        if let Some(message) = message {
            let values =
                binding::describe_row(&self.call.call.spec, self.call.signature, &args, row);
            return exec_err!(
                "table function `{}` {message} (row {row} of the batch, arguments: {values})",
                self.call.call.name
            );
        }
        sink.finish()
            .map_err(|e| DataFusionError::Execution(e.to_string()))?;
        for joined in std::mem::take(&mut sink.joined) {
            self.emit(joined)?;
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

    fn finish(&mut self) -> Result<()> {
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
    fn accept(&mut self, rows: ArrayRef, owners: Vec<usize>) -> Result<(), udf_core::Error> {
        let function = self.function_columns(&rows);
        match self.join {
            LateralJoin::Inner => {
                let input_rows = UInt32Array::from_iter_values(owners.iter().map(|&o| o as u32));
                self.assemble(&input_rows, function)
            }
            LateralJoin::Left => {
                let mut input_rows = Vec::with_capacity(owners.len());
                let mut emitted = Vec::with_capacity(owners.len());
                for (index, &owner) in owners.iter().enumerate() {
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

struct LateralStream {
    input: SendableRecordBatchStream,
    input_done: bool,
    correlate: Correlate,
}

impl Stream for LateralStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(batch) = self.correlate.ready.pop_front() {
                return Poll::Ready(Some(Ok(batch)));
            }
            if self.input_done {
                return Poll::Ready(None);
            }
            let outcome = match ready!(self.input.poll_next_unpin(cx)) {
                Some(Ok(batch)) => self.correlate.push(&batch),
                Some(Err(error)) => Err(error),
                None => {
                    self.input_done = true;
                    self.correlate.finish()
                }
            };
            if let Err(error) = outcome {
                self.input_done = true;
                return Poll::Ready(Some(Err(error)));
            }
        }
    }
}

impl RecordBatchStream for LateralStream {
    fn schema(&self) -> SchemaRef {
        self.correlate.schema.clone()
    }
}
