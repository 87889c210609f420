//! `WindowAggregateExec`: a window aggregate over its input partitions. The rows are routed
//! by the GROUP BY keys with the watermark of their input partition (the PTFs' router), so
//! each processor knows the watermark before every row even where DataFusion's
//! repartitioning would have lost it.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{EmissionType, apply_expression_roots};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::stream::BoxStream;

use super::aggregate_node::GroupColumn;
use super::aggregation::Aggregation;
use super::panes::WindowAggregation;
use super::processor::{self, Checkpointed};
use super::sessions::SessionAggregation;
use super::spec::WindowKind;
use crate::checkpoint::barrier::Flow;
use crate::checkpoint::coordinator::CheckpointTarget;
use crate::checkpoint::operator::{self, KeyedExec};
use crate::ops::ptf::router::Router;
use crate::ops::updating_aggregate::calls::Call;
use crate::session::table_options::TableOptions;
use crate::streaming::event_time::EventTime;
use crate::streaming::local_time::LocalTime;

#[derive(Debug)]
pub struct WindowAggregateExec {
    input: Arc<dyn ExecutionPlan>,
    window: WindowKind,
    time: EventTime,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    layout: Arc<[GroupColumn]>,
    calls: Arc<[Call]>,
    schema: SchemaRef,
    router: Arc<Router>,
    /// Whether checkpoints save its open windows (`snapshot.rs`).
    checkpointed: bool,
    /// Whether a committing sink reads its output with the barriers.
    committing_sink: bool,
    metrics: ExecutionPlanMetricsSet,
    properties: Arc<PlanProperties>,
}

impl WindowAggregateExec {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        input: Arc<dyn ExecutionPlan>,
        window: WindowKind,
        time: EventTime,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        layout: Vec<GroupColumn>,
        calls: Vec<Call>,
        schema: SchemaRef,
        target_partitions: usize,
    ) -> Self {
        let processors = if keys.is_empty() {
            1
        } else {
            target_partitions.max(1)
        };
        let router = processor::router(&input, &keys, &time, processors, None);
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(processors),
            EmissionType::Incremental,
            input.boundedness(),
        ));
        WindowAggregateExec {
            input,
            window,
            time,
            keys,
            layout: layout.into(),
            calls: calls.into(),
            schema,
            router: Arc::new(router),
            checkpointed: false,
            committing_sink: false,
            metrics: ExecutionPlanMetricsSet::new(),
            properties,
        }
    }

    fn processors(&self) -> usize {
        self.properties.output_partitioning().partition_count()
    }

    /// This exec over `region`, checkpointed (`KeyedExec::checkpointed`).
    fn checkpointed_over(&self, region: Arc<dyn ExecutionPlan>, committing_sink: bool) -> Self {
        let mut exec = WindowAggregateExec::new(
            region.clone(),
            self.window,
            self.time.clone(),
            self.keys.clone(),
            self.layout.to_vec(),
            self.calls.to_vec(),
            self.schema.clone(),
            self.processors(),
        );
        let target = CheckpointTarget {
            sink: committing_sink,
            ..self.target()
        };
        exec.router = Arc::new(processor::router(
            &region,
            &self.keys,
            &self.time,
            self.processors(),
            Some(target),
        ));
        exec.checkpointed = true;
        exec.committing_sink = committing_sink;
        exec
    }

    /// What checkpoints save its open windows as: SQL has no place for a window
    /// aggregate's uid, so it is derived from what it computes (`window-<16 hex digits>`).
    fn target(&self) -> CheckpointTarget {
        operator::derived_target("window", self.computes())
    }

    /// `TUMBLE(...) on ts GROUP BY keys: calls`, for uids and errors.
    fn computes(&self) -> String {
        let keys: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        format!(
            "{} on {} GROUP BY {}: {}",
            self.window,
            self.time.name,
            keys.join(", "),
            calls.join(", ")
        )
    }

    /// Processor `partition`'s open windows, empty.
    fn aggregation(&self, partition: usize, context: &TaskContext) -> Result<Aggregation> {
        let late = MetricBuilder::new(&self.metrics).counter("late_rows_dropped", partition);
        let sources = self.input.output_partitioning().partition_count();
        let local = local_time(&self.input.schema(), self.time.column, context);
        Ok(match self.window {
            WindowKind::Session { gap } => Aggregation::Sessions(SessionAggregation::new(
                gap,
                self.keys.clone(),
                &self.input.schema(),
                self.calls.clone(),
                self.layout.clone(),
                self.schema.clone(),
                sources,
                late,
                local,
            )?),
            window => Aggregation::Panes(WindowAggregation::new(
                window,
                self.keys.clone(),
                &self.input.schema(),
                self.calls.clone(),
                self.layout.clone(),
                self.schema.clone(),
                sources,
                late,
                local,
            )?),
        })
    }

    fn partition(
        &self,
        partition: usize,
        context: &TaskContext,
    ) -> Result<Checkpointed<Aggregation>> {
        Ok(Checkpointed {
            state: self.aggregation(partition, context)?,
            name: self.computes(),
        })
    }
}

impl KeyedExec for WindowAggregateExec {
    fn checkpoint_target(&self) -> Result<CheckpointTarget> {
        Ok(self.target())
    }

    fn checkpointed(
        &self,
        region: Arc<dyn ExecutionPlan>,
        sink: bool,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(
            self.checkpointed_over(region, sink || self.committing_sink),
        ))
    }

    fn execute_flow(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<BoxStream<'static, Result<Flow>>> {
        if !self.checkpointed {
            return internal_err!("a window aggregate without checkpoints has no barriers");
        }
        let operator = self.partition(partition, &context)?;
        operator::run_flow(
            operator,
            &self.router,
            partition,
            self.processors(),
            context,
        )
    }

    fn keyed_input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }
}

impl DisplayAs for WindowAggregateExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let keys: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        write!(
            f,
            "WindowAggregateExec: {} on {} (watermark {} - {} ms), groupBy=[{}], aggr=[{}]",
            self.window,
            self.time.name,
            self.time.name,
            self.time.delay_millis,
            keys.join(", "),
            calls.join(", ")
        )?;
        if self.checkpointed {
            write!(f, ", uid={}", self.target().uid)?;
        }
        Ok(())
    }
}

impl ExecutionPlan for WindowAggregateExec {
    fn name(&self) -> &str {
        "WindowAggregateExec"
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
            return internal_err!("WindowAggregateExec takes one input");
        }
        let input = children.swap_remove(0);
        if self.checkpointed {
            return Ok(Arc::new(
                self.checkpointed_over(input, self.committing_sink),
            ));
        }
        Ok(Arc::new(WindowAggregateExec::new(
            input,
            self.window,
            self.time.clone(),
            self.keys.clone(),
            self.layout.to_vec(),
            self.calls.to_vec(),
            self.schema.clone(),
            self.processors(),
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
        if self.checkpointed {
            let operator = self.partition(partition, &context)?;
            let processors = self.processors();
            let schema = self.schema.clone();
            return operator::run(
                operator,
                &self.router,
                partition,
                processors,
                schema,
                context,
            );
        }
        let aggregation = self.aggregation(partition, &context)?;
        let inbox = self.router.inbox(partition, context)?;
        Ok(processor::stream(
            inbox,
            aggregation,
            self.schema.clone(),
            "a window aggregate",
        ))
    }
}

/// The session's zone when the time column is a TIMESTAMP_LTZ and `table.local-time-zone` is
/// set: windows are then cut on the local clock.
pub(super) fn local_time(input: &Schema, time: usize, context: &TaskContext) -> Option<LocalTime> {
    let ltz = matches!(
        input.field(time).data_type(),
        DataType::Timestamp(_, Some(_))
    );
    let zone = TableOptions::local_time_zone(context.session_config().options())?;
    ltz.then_some(LocalTime(zone))
}
