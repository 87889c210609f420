//! `WindowAggregateExec`: a window aggregate over its input partitions. The rows are routed
//! by the GROUP BY keys with the watermark of their input partition (the PTFs' router), so
//! each processor knows the watermark before every row even where DataFusion's
//! repartitioning would have lost it. Planned for a cluster, the rows are stamped with their
//! route and watermark before the cluster's shuffle instead (`ops/routing/shuffle/`), and each
//! processor reads its own partition of the shuffle.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, internal_err, plan_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{EmissionType, apply_expression_roots};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    InputDistributionRequirements, PlanProperties,
};
use futures::stream::BoxStream;

use super::aggregate_node::GroupColumn;
use super::aggregation::Aggregation;
use super::panes::WindowAggregation;
use super::panes_on_disk::PanesOnDisk;
use super::processor::{self, Checkpointed};
use super::sessions::SessionAggregation;
use super::sessions_on_disk::SessionsOnDisk;
use super::spec::WindowKind;
use crate::checkpoint::barrier::Flow;
use crate::checkpoint::coordinator::CheckpointTarget;
use crate::checkpoint::operator::{self, KeyedExec};
use crate::ops::routing::router::{Router, Stamped};
use crate::ops::routing::shuffle::{ROUTE, ShuffleStampExec, stamp_routing_to, stamped_sources};
use crate::ops::updating_aggregate::calls::Call;
use crate::ops::updating_aggregate::on_disk::{GroupsOwner, GroupsStore};
use crate::session::table_options::TableOptions;
use crate::streaming::event_time::EventTime;
use crate::streaming::local_time::LocalTime;
use crate::streaming::state::disk::shared_run::SharedRun;

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
    /// On a cluster: the source partitions whose rows were stamped with their watermarks
    /// before the shuffle (`ops/routing/shuffle/`).
    stamped: Option<usize>,
    /// The disk store of the current run, with the disk backend (`panes_on_disk.rs`).
    disk: Arc<SharedRun>,
    metrics: ExecutionPlanMetricsSet,
    properties: Arc<PlanProperties>,
}

impl WindowAggregateExec {
    /// The exec of a local plan: rows routed to `target_partitions` processors by key.
    pub(crate) fn new(
        input: Arc<dyn ExecutionPlan>,
        grouped: WindowAggregate,
        target_partitions: usize,
    ) -> Self {
        Self::as_planned(input, grouped, target_partitions, None)
    }

    /// The exec of a plan for a cluster. With GROUP BY keys besides the window's bounds,
    /// the rows are stamped with their route and watermark before a shuffle on the route
    /// (`ops/routing/shuffle/`), which the cluster cuts a stage at; without, one task's
    /// processor reads every input partition, as on a local session.
    pub(crate) fn on_cluster(
        input: Arc<dyn ExecutionPlan>,
        grouped: WindowAggregate,
        target_partitions: usize,
    ) -> Self {
        if grouped.keys.is_empty() {
            return Self::as_planned(input, grouped, target_partitions, None);
        }
        let sources = input.output_partitioning().partition_count();
        let stamp = ShuffleStampExec::new(
            input,
            grouped.keys.clone(),
            Some(grouped.time.clone()),
            target_partitions,
        );
        Self::as_planned(Arc::new(stamp), grouped, target_partitions, Some(sources))
    }

    /// The exec over `input`; on a cluster its input was `stamped` by that many source
    /// partitions (as planned by `on_cluster`, or as encoded).
    pub(crate) fn as_planned(
        mut input: Arc<dyn ExecutionPlan>,
        grouped: WindowAggregate,
        target_partitions: usize,
        stamped: Option<usize>,
    ) -> Self {
        let WindowAggregate {
            window,
            time,
            keys,
            layout,
            calls,
            schema,
        } = grouped;
        // Until the cluster cuts its stage, the stamp is in sight: its sources count, and it
        // routes to as many processors as the shuffle made partitions.
        let stamped = stamped.map(|known| {
            let partitions = input.output_partitioning().partition_count();
            if let Some(plan) = stamp_routing_to(&input, partitions) {
                input = plan;
            }
            stamped_sources(&input).unwrap_or(known)
        });
        let processors = match stamped {
            Some(_) => input.output_partitioning().partition_count(),
            None if keys.is_empty() => 1,
            None => target_partitions.max(1),
        };
        let stamped_input = stamped.map(|sources| Stamped {
            sources,
            function: computes(window, &time, &keys, &calls),
        });
        let router = processor::router(&input, &keys, &time, processors, None, stamped_input);
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
            stamped,
            disk: Arc::default(),
            metrics: ExecutionPlanMetricsSet::new(),
            properties,
        }
    }

    /// What it computes, to build another exec of it.
    fn grouped(&self) -> WindowAggregate {
        WindowAggregate {
            window: self.window,
            time: self.time.clone(),
            keys: self.keys.clone(),
            layout: self.layout.to_vec(),
            calls: self.calls.to_vec(),
            schema: self.schema.clone(),
        }
    }

    pub(crate) fn window(&self) -> WindowKind {
        self.window
    }

    pub(crate) fn time(&self) -> &EventTime {
        &self.time
    }

    pub(crate) fn keys(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.keys
    }

    pub(crate) fn layout(&self) -> &[GroupColumn] {
        &self.layout
    }

    pub(crate) fn calls(&self) -> &[Call] {
        &self.calls
    }

    pub(crate) fn is_checkpointed(&self) -> bool {
        self.checkpointed
    }

    /// The source partitions stamped before a cluster's shuffle.
    pub(crate) fn stamped(&self) -> Option<usize> {
        self.stamped
    }

    pub(crate) fn processors(&self) -> usize {
        self.properties.output_partitioning().partition_count()
    }

    /// This exec over `region`, checkpointed (`KeyedExec::checkpointed`).
    fn checkpointed_over(&self, region: Arc<dyn ExecutionPlan>, committing_sink: bool) -> Self {
        let mut exec = WindowAggregateExec::new(region.clone(), self.grouped(), self.processors());
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
            None,
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
        computes(self.window, &self.time, &self.keys, &self.calls)
    }

    /// Processor `partition`'s open windows, empty, over `sources` input partitions.
    fn aggregation(
        &self,
        partition: usize,
        sources: usize,
        context: &TaskContext,
    ) -> Result<Aggregation> {
        let late = MetricBuilder::new(&self.metrics).counter("late_rows_dropped", partition);
        let local = local_time(&self.input.schema(), self.time.column, context);
        Ok(match self.window {
            WindowKind::Session { gap } => {
                let sessions = SessionAggregation::new(
                    gap,
                    self.keys.clone(),
                    &self.input.schema(),
                    self.calls.clone(),
                    self.layout.clone(),
                    self.schema.clone(),
                    sources,
                    late,
                    local,
                )?;
                Aggregation::Sessions(match self.groups_store(partition, context)? {
                    Some(start) => sessions.with_disk(SessionsOnDisk::new(start, partition)?),
                    None => sessions,
                })
            }
            window => {
                let panes = WindowAggregation::new(
                    window,
                    self.keys.clone(),
                    &self.input.schema(),
                    self.calls.clone(),
                    self.layout.clone(),
                    self.schema.clone(),
                    sources,
                    late,
                    local,
                )?;
                Aggregation::Panes(match self.groups_store(partition, context)? {
                    Some(start) => panes.with_disk(PanesOnDisk::new(start, partition)?),
                    None => panes,
                })
            }
        })
    }

    /// Where processor `partition` keeps the groups or sessions beyond its budget, with the
    /// disk backend. Without keys a window has one group, and the open windows stay in memory.
    fn groups_store(&self, partition: usize, context: &TaskContext) -> Result<Option<GroupsStore>> {
        let owner = GroupsOwner {
            run: &self.disk,
            uid: &self.target().uid,
            keys: &self.keys,
            input: &self.input.schema(),
            metrics: &self.metrics,
            processors: self.processors(),
        };
        GroupsStore::open(owner, partition, context)
    }

    fn partition(
        &self,
        partition: usize,
        context: &TaskContext,
    ) -> Result<Checkpointed<Aggregation>> {
        let sources = self.input.output_partitioning().partition_count();
        Ok(Checkpointed {
            state: self.aggregation(partition, sources, context)?,
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
        if self.stamped.is_some() {
            return plan_err!(
                "`{}` is planned for a Ballista cluster, which runs bounded queries without checkpoints",
                self.computes()
            );
        }
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
        if self.stamped.is_some() {
            write!(
                f,
                ", processors={} (rows partitioned by key upstream, stamped with their watermarks)",
                self.processors()
            )?;
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

    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        // On a cluster, a shuffle on the route each row was stamped with; locally the exec
        // routes rows to its processors itself, watermarks with them.
        let route = self.stamped.and_then(|_| {
            let index = self.input.schema().index_of(ROUTE).ok()?;
            Some(Arc::new(Column::new(ROUTE, index)) as Arc<dyn PhysicalExpr>)
        });
        InputDistributionRequirements::new(vec![match route {
            Some(route) => Distribution::KeyPartitioned(vec![route]),
            None => Distribution::UnspecifiedDistribution,
        }])
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![self.stamped.is_none()]
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
        Ok(Arc::new(WindowAggregateExec::as_planned(
            input,
            self.grouped(),
            self.processors(),
            self.stamped,
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
        let inbox = self.router.inbox(partition, context.clone())?;
        let aggregation = self.aggregation(partition, inbox.sources.iter().sum(), &context)?;
        Ok(processor::stream(
            inbox,
            aggregation,
            self.schema.clone(),
            "a window aggregate",
        ))
    }
}

/// What a window aggregate computes, before it is an exec: the window, its time attribute,
/// the GROUP BY keys besides the window's bounds, where each grouped column comes from, the
/// aggregate calls and the output schema.
pub(crate) struct WindowAggregate {
    pub window: WindowKind,
    pub time: EventTime,
    pub keys: Vec<Arc<dyn PhysicalExpr>>,
    pub layout: Vec<GroupColumn>,
    pub calls: Vec<Call>,
    pub schema: SchemaRef,
}

/// `TUMBLE(...) on ts GROUP BY keys: calls`, for uids and errors.
fn computes(
    window: WindowKind,
    time: &EventTime,
    keys: &[Arc<dyn PhysicalExpr>],
    calls: &[Call],
) -> String {
    let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
    let calls: Vec<String> = calls.iter().map(ToString::to_string).collect();
    format!(
        "{window} on {} GROUP BY {}: {}",
        time.name,
        keys.join(", "),
        calls.join(", ")
    )
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
