//! `WindowTvfExec`: each row once per window it belongs to, with the window's bounds.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, Int64Array, RecordBatch, TimestampMillisecondArray, UInt32Array,
};
use datafusion::arrow::compute::{cast, take};
use datafusion::arrow::datatypes::{DataType as ArrowType, SchemaRef, TimeUnit};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, exec_err, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::EmissionType;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::StreamExt;

use super::aggregate_exec::local_time;
use super::spec::WindowKind;
use crate::streaming::local_time::LocalTime;

#[derive(Debug)]
pub struct WindowTvfExec {
    input: Arc<dyn ExecutionPlan>,
    window: WindowKind,
    time: usize,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl WindowTvfExec {
    pub(crate) fn window(&self) -> WindowKind {
        self.window
    }

    /// The time column of its input.
    pub(crate) fn time_column(&self) -> usize {
        self.time
    }

    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        window: WindowKind,
        time: usize,
        schema: SchemaRef,
    ) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            input.output_partitioning().clone(),
            EmissionType::Incremental,
            input.boundedness(),
        ));
        WindowTvfExec {
            input,
            window,
            time,
            schema,
            properties,
        }
    }
}

/// A time column as epoch milliseconds.
pub fn epoch_millis(column: &ArrayRef) -> Result<Int64Array> {
    let millis = cast(column, &ArrowType::Timestamp(TimeUnit::Millisecond, None))?;
    let millis = cast(&millis, &ArrowType::Int64)?;
    Ok(millis
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("cast to Int64")
        .clone())
}

/// The batch with its rows repeated once per window, and the window columns.
fn assign(
    batch: &RecordBatch,
    window: WindowKind,
    time: usize,
    schema: &SchemaRef,
    local: Option<&LocalTime>,
) -> Result<RecordBatch> {
    let times = epoch_millis(batch.column(time))?;
    let mut rows = Vec::with_capacity(batch.num_rows());
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    let mut windows = Vec::new();
    for row in 0..batch.num_rows() {
        if times.is_null(row) {
            return exec_err!(
                "row {row} has no time: a window table function's time column cannot be NULL"
            );
        }
        let at = match local {
            Some(local) => local.local(times.value(row)),
            None => times.value(row),
        };
        window.windows(at, &mut windows);
        for &(start, end) in &windows {
            rows.push(row as u32);
            starts.push(start);
            ends.push(end);
        }
    }
    let rows = UInt32Array::from(rows);
    let mut columns: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .map(|c| take(c, &rows, None))
        .collect::<std::result::Result<_, _>>()?;
    // The window's last instant: on the local clock, back to UTC for a TIMESTAMP_LTZ.
    let window_time =
        TimestampMillisecondArray::from_iter_values(ends.iter().map(|&end| match local {
            Some(local) => local.utc(end) - 1,
            None => end - 1,
        }));
    columns.push(Arc::new(TimestampMillisecondArray::from(starts)));
    columns.push(Arc::new(TimestampMillisecondArray::from(ends)));
    columns.push(cast(&window_time, schema.field(columns.len()).data_type())?);
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

impl DisplayAs for WindowTvfExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let time = self.input.schema().field(self.time).name().clone();
        write!(f, "WindowTvfExec: {} on {time}", self.window)
    }
}

impl ExecutionPlan for WindowTvfExec {
    fn name(&self) -> &str {
        "WindowTvfExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("WindowTvfExec takes one input");
        }
        Ok(Arc::new(WindowTvfExec::new(
            children.swap_remove(0),
            self.window,
            self.time,
            self.schema.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let local = local_time(&self.input.schema(), self.time, &context);
        let input = self.input.execute(partition, context)?;
        let (window, time, schema) = (self.window, self.time, self.schema.clone());
        let stream = input.map(move |batch| assign(&batch?, window, time, &schema, local.as_ref()));
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}
