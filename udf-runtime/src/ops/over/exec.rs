//! `EventTimeOverExec`: a row-time OVER window over its input partitions, the rows routed by
//! the PARTITION BY keys with their source's watermark (the PTFs' router).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{EmissionType, apply_expression_roots};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};

use super::frames::OverProcessor;
use super::node::Frame;
use crate::ops::ptf::router::{Router, RouterInput};
use crate::ops::updating_aggregate::calls::Call;
use crate::ops::window::processor;
use crate::streaming::event_time::EventTime;

#[derive(Debug)]
pub struct EventTimeOverExec {
    input: Arc<dyn ExecutionPlan>,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    time: EventTime,
    frame: Frame,
    calls: Arc<[Call]>,
    schema: SchemaRef,
    router: Arc<Router>,
    metrics: ExecutionPlanMetricsSet,
    properties: Arc<PlanProperties>,
}

impl EventTimeOverExec {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        input: Arc<dyn ExecutionPlan>,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        time: EventTime,
        frame: Frame,
        calls: Vec<Call>,
        schema: SchemaRef,
        target_partitions: usize,
    ) -> Self {
        let processors = if keys.is_empty() {
            1
        } else {
            target_partitions.max(1)
        };
        let router = Router::new(
            vec![RouterInput {
                plan: input.clone(),
                keys: keys.clone(),
                event_time: Some(time.clone()),
            }],
            processors,
            false,
            None,
        );
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(processors),
            EmissionType::Incremental,
            input.boundedness(),
        ));
        EventTimeOverExec {
            input,
            keys,
            time,
            frame,
            calls: calls.into(),
            schema,
            router: Arc::new(router),
            metrics: ExecutionPlanMetricsSet::new(),
            properties,
        }
    }
}

impl DisplayAs for EventTimeOverExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let keys: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        write!(
            f,
            "EventTimeOverExec: partitionBy=[{}], orderBy={} (watermark - {} ms), {} AND CURRENT ROW, aggr=[{}]",
            keys.join(", "),
            self.time.name,
            self.time.delay_millis,
            self.frame,
            calls.join(", ")
        )
    }
}

impl ExecutionPlan for EventTimeOverExec {
    fn name(&self) -> &str {
        "EventTimeOverExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![false]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        let exprs = self.calls.iter().flat_map(Call::expressions);
        apply_expression_roots(self.keys.iter().chain(exprs), f)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("EventTimeOverExec takes one input");
        }
        Ok(Arc::new(EventTimeOverExec::new(
            children.swap_remove(0),
            self.keys.clone(),
            self.time.clone(),
            self.frame,
            self.calls.to_vec(),
            self.schema.clone(),
            self.properties.output_partitioning().partition_count(),
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let late = MetricBuilder::new(&self.metrics).counter("late_rows_dropped", partition);
        let inbox = self.router.inbox(partition, context)?;
        let frames = OverProcessor::new(
            self.frame,
            self.keys.clone(),
            &self.input.schema(),
            self.calls.clone(),
            self.schema.clone(),
            inbox.sources.iter().sum(),
            late,
        )?;
        Ok(processor::stream(
            inbox,
            frames,
            self.schema.clone(),
            "an OVER window over a stream",
        ))
    }
}
