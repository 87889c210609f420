//! `ShuffleStampExec`: an input's rows (a PTF's table argument, a window aggregate's input)
//! stamped before a cluster's shuffle with their processor's route, their source partition
//! and the watermark before each, followed by the source's watermark advances and end for
//! every processor (the protocol: `mod.rs`).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, Int8Array, Int64Array, RecordBatch, UInt32Array, new_null_array,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{EmissionType, apply_expression_roots};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties,
    PlanProperties, ReplaceChildrenOptions,
};
use futures::{StreamExt, stream};

use super::{ADVANCE, END, MARK, ROUTE, ROW, SOURCE, WATERMARK, routes};
use crate::ops::routing::router::{key_hashes, processor_of};
use crate::ops::routing::source_watermark::SourceWatermark;
use crate::streaming::event_time::EventTime;

#[derive(Debug)]
pub struct ShuffleStampExec {
    input: Arc<dyn ExecutionPlan>,
    /// The PARTITION BY keys (cast to the types all tables share).
    keys: Vec<Arc<dyn PhysicalExpr>>,
    event_time: Option<EventTime>,
    /// The processors (shuffle partitions) after the shuffle.
    processors: usize,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl ShuffleStampExec {
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        event_time: Option<EventTime>,
        processors: usize,
    ) -> Self {
        let schema = stamped_schema(&input.schema());
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(input.output_partitioning().partition_count()),
            EmissionType::Incremental,
            input.boundedness(),
        ));
        ShuffleStampExec {
            input,
            keys,
            event_time,
            processors,
            schema,
            properties,
        }
    }

    pub fn keys(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.keys
    }

    pub fn event_time(&self) -> Option<&EventTime> {
        self.event_time.as_ref()
    }

    pub fn processors(&self) -> usize {
        self.processors
    }

    /// This stamp routing to `processors` processors.
    pub fn routing_to(&self, processors: usize) -> Self {
        ShuffleStampExec::new(
            self.input.clone(),
            self.keys.clone(),
            self.event_time.clone(),
            processors,
        )
    }

    /// The source partitions it stamps.
    pub fn sources(&self) -> usize {
        self.input.output_partitioning().partition_count()
    }
}

/// A table's columns, nullable, then the stamp's.
fn stamped_schema(input: &Schema) -> SchemaRef {
    let mut fields: Vec<Field> = input
        .fields()
        .iter()
        .map(|field| field.as_ref().clone().with_nullable(true))
        .collect();
    fields.extend([
        Field::new(ROUTE, DataType::Int64, false),
        Field::new(SOURCE, DataType::UInt32, false),
        Field::new(MARK, DataType::Int8, false),
        Field::new(WATERMARK, DataType::Int64, true),
    ]);
    Arc::new(Schema::new(fields))
}

/// One source partition's stamping.
struct Stamper {
    keys: Vec<Arc<dyn PhysicalExpr>>,
    watermark: SourceWatermark,
    routes: Vec<i64>,
    source: u32,
    sources: usize,
    schema: SchemaRef,
    /// The watermark the processors last heard of.
    announced: Option<i64>,
    hashes: Vec<u64>,
}

impl Stamper {
    /// A batch's rows stamped, then an advance for every processor if its watermark moved.
    fn stamp(&mut self, batch: &RecordBatch) -> Result<Vec<RecordBatch>> {
        let rows = batch.num_rows();
        let before = self.watermark.pass(batch)?.map(|times| times.before);
        key_hashes(&self.keys, batch, &mut self.hashes)?;
        let processors = self.routes.len();
        let routes = Int64Array::from_iter_values(
            self.hashes
                .iter()
                .map(|&hash| self.routes[processor_of(hash, processors)]),
        );
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        columns.extend([
            Arc::new(routes) as ArrayRef,
            Arc::new(UInt32Array::from_value(self.source, rows)),
            Arc::new(Int8Array::from_value(ROW, rows)),
            Arc::new(match before {
                Some(before) => Int64Array::from(before),
                None => Int64Array::new_null(rows),
            }),
        ]);
        let mut stamped = vec![RecordBatch::try_new(self.schema.clone(), columns)?];
        let after = self.watermark.current();
        if after.is_some() && after != self.announced {
            self.announced = after;
            stamped.push(self.marks(ADVANCE, after)?);
        }
        Ok(stamped)
    }

    /// A mark for every processor; the data columns NULL.
    fn marks(&self, mark: i8, value: Option<i64>) -> Result<RecordBatch> {
        let count = self.routes.len();
        let own = self.schema.fields().len() - super::STAMP_COLUMNS;
        let mut columns: Vec<ArrayRef> = self.schema.fields()[..own]
            .iter()
            .map(|field| new_null_array(field.data_type(), count))
            .collect();
        columns.extend([
            Arc::new(Int64Array::from(self.routes.clone())) as ArrayRef,
            Arc::new(UInt32Array::from_value(self.source, count)),
            Arc::new(Int8Array::from_value(mark, count)),
            Arc::new(Int64Array::from(vec![value; count])),
        ]);
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }

    /// The source's end, with the source count (the receiving side checks it).
    fn end(&self) -> Result<RecordBatch> {
        self.marks(END, Some(self.sources as i64))
    }
}

impl DisplayAs for ShuffleStampExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let time = self
            .event_time
            .as_ref()
            .map_or_else(|| "none".to_string(), |t| format!("`{}`", t.name));
        write!(
            f,
            "ShuffleStampExec: routes for {} processors, watermarks of {time}",
            self.processors
        )
    }
}

impl ExecutionPlan for ShuffleStampExec {
    fn name(&self) -> &str {
        "ShuffleStampExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    /// A source's watermark follows its rows in order.
    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    /// Its partitions are the sources whose watermarks it stamps: not to be split.
    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        apply_expression_roots(self.keys.iter(), f)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("ShuffleStampExec takes one input");
        }
        Ok(Arc::new(ShuffleStampExec::new(
            children.swap_remove(0),
            self.keys.clone(),
            self.event_time.clone(),
            self.processors,
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let mut stamper = Stamper {
            keys: self.keys.clone(),
            watermark: SourceWatermark::new(self.event_time.clone()),
            routes: routes(self.processors)?,
            source: partition as u32,
            sources: self.sources(),
            schema: self.schema.clone(),
            announced: None,
            hashes: Vec::new(),
        };
        let end = stamper.end()?;
        let stamped = self
            .input
            .execute(partition, context)?
            .map(
                move |batch| match batch.and_then(|batch| stamper.stamp(&batch)) {
                    Ok(batches) => stream::iter(batches.into_iter().map(Ok)).left_stream(),
                    Err(error) => stream::once(async { Err(error) }).right_stream(),
                },
            )
            .flatten()
            .chain(stream::once(async { Ok(end) }));
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stamped,
        )))
    }
}

/// The source partitions of the stamp below `plan`, through single-input nodes (a
/// repartition, batch coalescing), if it is still in sight.
pub(crate) fn stamped_sources(plan: &Arc<dyn ExecutionPlan>) -> Option<usize> {
    let mut plan = plan;
    loop {
        if let Some(stamp) =
            (plan.as_ref() as &dyn std::any::Any).downcast_ref::<ShuffleStampExec>()
        {
            return Some(stamp.sources());
        }
        match plan.children().as_slice() {
            [child] => plan = child,
            _ => return None,
        }
    }
}

/// `plan` with the stamp below it (through single-input nodes) routing to `processors`, if
/// it is in sight and routes to another number.
pub(crate) fn stamp_routing_to(
    plan: &Arc<dyn ExecutionPlan>,
    processors: usize,
) -> Option<Arc<dyn ExecutionPlan>> {
    if let Some(stamp) = (plan.as_ref() as &dyn std::any::Any).downcast_ref::<ShuffleStampExec>() {
        return (stamp.processors() != processors)
            .then(|| Arc::new(stamp.routing_to(processors)) as Arc<dyn ExecutionPlan>);
    }
    match plan.children().as_slice() {
        [child] => {
            let child = stamp_routing_to(child, processors)?;
            let recompute = ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute);
            plan.clone().replace_children(vec![child], recompute).ok()
        }
        _ => None,
    }
}
