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
use futures::stream::BoxStream;

use super::frames::OverProcessor;
use super::node::Frame;
use super::on_disk::KeysOnDisk;
use crate::checkpoint::barrier::Flow;
use crate::checkpoint::coordinator::CheckpointTarget;
use crate::checkpoint::operator::{self, KeyedExec};
use crate::ops::routing::router::Router;
use crate::ops::updating_aggregate::calls::Call;
use crate::ops::updating_aggregate::on_disk::{GroupsOwner, GroupsStore};
use crate::ops::window::processor::{self, Checkpointed};
use crate::streaming::event_time::EventTime;
use crate::streaming::state::disk::shared_run::SharedRun;

#[derive(Debug)]
pub struct EventTimeOverExec {
    input: Arc<dyn ExecutionPlan>,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    time: EventTime,
    frame: Frame,
    calls: Arc<[Call]>,
    schema: SchemaRef,
    router: Arc<Router>,
    /// Whether checkpoints save its keys and kept rows (`snapshot.rs`).
    checkpointed: bool,
    /// Whether a committing sink reads its output with the barriers.
    committing_sink: bool,
    metrics: ExecutionPlanMetricsSet,
    properties: Arc<PlanProperties>,
    /// The disk store of the current run, with the disk backend (`on_disk.rs`).
    disk: Arc<SharedRun>,
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
        let router = processor::router(&input, &keys, &time, processors, None, None);
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
            checkpointed: false,
            committing_sink: false,
            metrics: ExecutionPlanMetricsSet::new(),
            properties,
            disk: Arc::default(),
        }
    }

    fn processors(&self) -> usize {
        self.properties.output_partitioning().partition_count()
    }

    /// This exec over `region`, checkpointed (`KeyedExec::checkpointed`).
    fn checkpointed_over(&self, region: Arc<dyn ExecutionPlan>, committing_sink: bool) -> Self {
        let mut exec = EventTimeOverExec::new(
            region.clone(),
            self.keys.clone(),
            self.time.clone(),
            self.frame,
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
            None,
        ));
        exec.checkpointed = true;
        exec.committing_sink = committing_sink;
        exec
    }

    /// What checkpoints save its state as: SQL has no place for an OVER window's uid, so it
    /// is derived from what it computes (`over-<16 hex digits>`).
    fn target(&self) -> CheckpointTarget {
        operator::derived_target("over", self.computes())
    }

    /// `OVER (PARTITION BY keys ORDER BY ts frame): calls`, for uids and errors.
    fn computes(&self) -> String {
        let keys: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        format!(
            "OVER (PARTITION BY {} ORDER BY {} {} AND CURRENT ROW): {}",
            keys.join(", "),
            self.time.name,
            self.frame,
            calls.join(", ")
        )
    }

    fn partition(
        &self,
        partition: usize,
        context: &TaskContext,
    ) -> Result<Checkpointed<OverProcessor>> {
        let late = MetricBuilder::new(&self.metrics).counter("late_rows_dropped", partition);
        let frames = OverProcessor::new(
            self.frame,
            self.keys.clone(),
            &self.input.schema(),
            self.calls.clone(),
            self.schema.clone(),
            self.input.output_partitioning().partition_count(),
            late,
        )?;
        let owner = GroupsOwner {
            run: &self.disk,
            uid: &self.target().uid,
            keys: &self.keys,
            input: &self.input.schema(),
            metrics: &self.metrics,
            processors: self.processors(),
        };
        // Without keys the one key stays in memory.
        let frames = match GroupsStore::open(owner, partition, context)? {
            Some(start) => {
                frames.with_disk(KeysOnDisk::new(start, &self.input.schema(), partition)?)
            }
            None => frames,
        };
        Ok(Checkpointed {
            state: frames,
            name: self.computes(),
        })
    }
}

impl KeyedExec for EventTimeOverExec {
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
            return internal_err!("an OVER window without checkpoints has no barriers");
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
        )?;
        if self.checkpointed {
            write!(f, ", uid={}", self.target().uid)?;
        }
        Ok(())
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
        let input = children.swap_remove(0);
        if self.checkpointed {
            return Ok(Arc::new(
                self.checkpointed_over(input, self.committing_sink),
            ));
        }
        Ok(Arc::new(EventTimeOverExec::new(
            input,
            self.keys.clone(),
            self.time.clone(),
            self.frame,
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
        let operator = self.partition(partition, &context)?;
        if self.checkpointed {
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
        let inbox = self.router.inbox(partition, context)?;
        let frames = operator.state;
        Ok(processor::stream(
            inbox,
            frames,
            self.schema.clone(),
            "an OVER window over a stream",
        ))
    }
}
