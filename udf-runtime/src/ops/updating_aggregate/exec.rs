//! `UpdatingAggregateExec`: an updating GROUP BY over its input partitions, hash-partitioned
//! by the group keys so each partition holds whole groups (all rows in one partition without
//! keys). Every input batch may emit changelog rows, in its rows' order. With checkpoints
//! the exec routes its input itself and saves its groups (`checkpointed.rs`); with the disk
//! backend its partitions share a store for the groups beyond the budget (`on_disk.rs`).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{EmissionType, apply_expression_roots};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    InputDistributionRequirements, PlanProperties,
};
use futures::StreamExt;
use futures::stream::BoxStream;

use super::aggregation::UpdatingAggregation;
use super::calls::Call;
use super::checkpointed::Partition;
use super::on_disk::{GroupsOnDisk, GroupsOwner, GroupsStore};
use crate::checkpoint::barrier::Flow;
use crate::checkpoint::coordinator::CheckpointTarget;
use crate::checkpoint::operator::{self, KeyedExec};
use crate::ops::routing::router::{Router, RouterInput};
use crate::streaming::state::disk::shared_run::SharedRun;

#[derive(Debug)]
pub struct UpdatingAggregateExec {
    input: Arc<dyn ExecutionPlan>,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    calls: Arc<[Call]>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    /// With checkpoints: routes the input's rows by group key (`checkpointed.rs`).
    router: Option<Arc<Router>>,
    /// Its output goes to a committing sink, whose answers its checkpoints wait for.
    committing_sink: bool,
    /// The disk store of the current run, with the disk backend (`on_disk.rs`).
    disk: Arc<SharedRun>,
    metrics: ExecutionPlanMetricsSet,
}

impl UpdatingAggregateExec {
    pub(crate) fn new(
        input: Arc<dyn ExecutionPlan>,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        calls: Vec<Call>,
        schema: SchemaRef,
    ) -> Self {
        let partitions = if keys.is_empty() {
            1
        } else {
            input.output_partitioning().partition_count()
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            input.boundedness(),
        ));
        UpdatingAggregateExec {
            input,
            keys,
            calls: calls.into(),
            schema,
            properties,
            router: None,
            committing_sink: false,
            disk: Arc::default(),
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// This exec over `region`, checkpointed (`KeyedExec::checkpointed`).
    fn checkpointed_over(&self, region: Arc<dyn ExecutionPlan>, committing_sink: bool) -> Self {
        let target = CheckpointTarget {
            sink: committing_sink,
            ..self.target()
        };
        let input = RouterInput {
            plan: region.clone(),
            keys: self.keys.clone(),
            event_time: None,
            stamped: None,
        };
        let router = Router::new(vec![input], self.partitions(), false, Some(target));
        UpdatingAggregateExec {
            input: region,
            keys: self.keys.clone(),
            calls: self.calls.clone(),
            schema: self.schema.clone(),
            properties: self.properties.clone(),
            router: Some(Arc::new(router)),
            committing_sink,
            disk: Arc::default(),
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// What checkpoints save this exec's groups as. A GROUP BY has no place for a uid in
    /// SQL, so its uid is derived from what it computes — its keys and calls — as
    /// `group-by-<16 hex digits>`: the same query gets the same uid in every run, and EXPLAIN
    /// shows it.
    fn target(&self) -> CheckpointTarget {
        operator::derived_target("group-by", self.computes())
    }

    /// `GROUP BY keys: calls`, for uids and errors.
    fn computes(&self) -> String {
        let keys: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        format!("GROUP BY {}: {}", keys.join(", "), calls.join(", "))
    }

    fn partitions(&self) -> usize {
        self.properties.output_partitioning().partition_count()
    }

    fn aggregation(&self, partition: usize, context: &TaskContext) -> Result<UpdatingAggregation> {
        let aggregation = UpdatingAggregation::new(
            self.keys.clone(),
            self.calls.clone(),
            &self.input.schema(),
            self.schema.clone(),
        )?;
        Ok(match self.groups_on_disk(partition, context)? {
            Some(disk) => aggregation.with_disk(disk),
            None => aggregation,
        })
    }

    /// Partition `partition`'s groups on disk, with the disk backend. Without keys there is
    /// one group, which stays in memory.
    fn groups_on_disk(
        &self,
        partition: usize,
        context: &TaskContext,
    ) -> Result<Option<GroupsOnDisk>> {
        let owner = GroupsOwner {
            run: &self.disk,
            uid: &self.target().uid,
            keys: &self.keys,
            input: &self.input.schema(),
            metrics: &self.metrics,
            processors: self.partitions(),
        };
        GroupsStore::open(owner, partition, context)?
            .map(|start| GroupsOnDisk::new(start, partition))
            .transpose()
    }

    fn partition(&self, partition: usize, context: &TaskContext) -> Result<Partition> {
        Ok(Partition {
            aggregation: self.aggregation(partition, context)?,
            name: self.computes(),
        })
    }
}

impl KeyedExec for UpdatingAggregateExec {
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
        let Some(router) = &self.router else {
            return internal_err!("a GROUP BY without checkpoints has no barriers");
        };
        let partitions = self.partitions();
        let operator = self.partition(partition, &context)?;
        operator::run_flow(operator, router, partition, partitions, context)
    }

    fn keyed_input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }
}

impl DisplayAs for UpdatingAggregateExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let keys: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        write!(
            f,
            "UpdatingAggregateExec: groupBy=[{}], aggr=[{}], emit=changelog",
            keys.join(", "),
            calls.join(", ")
        )?;
        if self.router.is_some() {
            write!(f, ", uid={}", self.target().uid)?;
        }
        Ok(())
    }
}

impl ExecutionPlan for UpdatingAggregateExec {
    fn name(&self) -> &str {
        "UpdatingAggregateExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        let distribution = if self.keys.is_empty() {
            Distribution::SinglePartition
        } else {
            Distribution::KeyPartitioned(self.keys.clone())
        };
        InputDistributionRequirements::new(vec![distribution])
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
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
            return internal_err!("UpdatingAggregateExec takes one input");
        }
        let input = children.swap_remove(0);
        if self.router.is_some() {
            return Ok(Arc::new(
                self.checkpointed_over(input, self.committing_sink),
            ));
        }
        Ok(Arc::new(UpdatingAggregateExec::new(
            input,
            self.keys.clone(),
            self.calls.to_vec(),
            self.schema.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if let Some(router) = &self.router {
            let (operator, partitions) = (self.partition(partition, &context)?, self.partitions());
            return operator::run(
                operator,
                router,
                partition,
                partitions,
                self.schema.clone(),
                context,
            );
        }
        let aggregation = self.aggregation(partition, &context)?;
        let input = self.input.execute(partition, context)?;
        let stream = futures::stream::unfold(
            (input, aggregation),
            |(mut input, mut aggregation)| async move {
                loop {
                    let batch = match input.next().await? {
                        Ok(batch) => batch,
                        Err(error) => return Some((Err(error), (input, aggregation))),
                    };
                    match aggregation.push(&batch) {
                        Ok(None) => continue,
                        Ok(Some(output)) => return Some((Ok(output), (input, aggregation))),
                        Err(error) => return Some((Err(error), (input, aggregation))),
                    }
                }
            },
        );
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}
