//! `TableAggregateExec`: runs a table aggregation over its input partitions.
//!
//! A function with `merge` in final mode aggregates each input partition where it is and
//! merges the partial accumulators (moving accumulators, not rows). Otherwise the input is
//! hash-partitioned by the GROUP BY keys, so each partition holds whole groups; a changelog
//! is emitted batch by batch, in each group's input order.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, internal_err, plan_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{
    Boundedness, EmissionType, apply_expression_roots,
};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    InputDistributionRequirements, PlanProperties,
};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};

use super::batches::{output_batch, push};
use super::checkpointed::Partition;
use super::node::TableAggregateCall;
use super::on_disk::AccumulatorsOnDisk;
use crate::checkpoint::barrier::Flow;
use crate::checkpoint::coordinator::CheckpointTarget;
use crate::checkpoint::operator::{self, KeyedExec};
use crate::ops::routing::router::{Router, RouterInput};
use crate::ops::table_aggregate::aggregation::{EmitMode, TableAggregation};
use crate::ops::updating_aggregate::on_disk::{GroupsOwner, GroupsStore};
use crate::streaming::state::disk::shared_run::SharedRun;
use udf_core::types::DataType;

#[derive(Debug)]
pub struct TableAggregateExec {
    input: Arc<dyn ExecutionPlan>,
    group_by: Vec<Arc<dyn PhysicalExpr>>,
    args: Vec<Arc<dyn PhysicalExpr>>,
    call: TableAggregateCall,
    signature: usize,
    row_type: DataType,
    row_is_struct: bool,
    schema: SchemaRef,
    /// Aggregate in place and merge the partial accumulators.
    merge_partials: bool,
    properties: Arc<PlanProperties>,
    /// With checkpoints: routes the input's rows by group key (`checkpointed.rs`).
    router: Option<Arc<Router>>,
    /// Its output goes to a committing sink, whose answers its checkpoints wait for.
    committing_sink: bool,
    /// The disk store of the current run, with the disk backend (`on_disk.rs`).
    disk: Arc<SharedRun>,
    metrics: ExecutionPlanMetricsSet,
}

impl TableAggregateExec {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        group_by: Vec<Arc<dyn PhysicalExpr>>,
        args: Vec<Arc<dyn PhysicalExpr>>,
        call: TableAggregateCall,
        signature: usize,
        row_type: DataType,
        row_is_struct: bool,
        schema: SchemaRef,
    ) -> Self {
        let merge_partials = call.mode == EmitMode::Final
            && call.spec.capabilities.merge
            && call.function.emits().value
            && input.output_partitioning().partition_count() > 1;
        let partitions = if merge_partials {
            1
        } else {
            input.output_partitioning().partition_count()
        };
        let emission = match call.mode {
            EmitMode::Final => EmissionType::Final,
            EmitMode::Changelog => EmissionType::Incremental,
        };
        // Over unbounded input a changelog goes on as rows come; final results never come
        // (DataFusion refuses such a plan as pipeline breaking).
        let boundedness = match input.boundedness() {
            Boundedness::Bounded => Boundedness::Bounded,
            Boundedness::Unbounded { .. } => Boundedness::Unbounded {
                requires_infinite_memory: call.mode == EmitMode::Final,
            },
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            emission,
            boundedness,
        ));
        TableAggregateExec {
            input,
            group_by,
            args,
            call,
            signature,
            row_type,
            row_is_struct,
            schema,
            merge_partials,
            properties,
            router: None,
            committing_sink: false,
            disk: Arc::default(),
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    pub(crate) fn group_by(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.group_by
    }

    /// The arguments, cast to the parameter types where needed.
    pub(crate) fn args(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.args
    }

    pub(crate) fn call(&self) -> &TableAggregateCall {
        &self.call
    }

    pub(crate) fn signature(&self) -> usize {
        self.signature
    }

    /// Whether it runs under checkpoints (routing its input itself).
    pub(crate) fn is_checkpointed(&self) -> bool {
        self.router.is_some()
    }

    /// This exec over `region`, checkpointed (`KeyedExec::checkpointed`).
    fn checkpointed_over(
        &self,
        region: Arc<dyn ExecutionPlan>,
        committing_sink: bool,
    ) -> Result<TableAggregateExec> {
        let target = CheckpointTarget {
            sink: committing_sink,
            ..self.target()?
        };
        let mut exec = self.over(region.clone());
        exec.committing_sink = committing_sink;
        let input = RouterInput {
            plan: region,
            keys: self.group_by.clone(),
            event_time: None,
            stamped: None,
        };
        exec.router = Some(Arc::new(Router::new(
            vec![input],
            self.partitions(),
            false,
            Some(target),
        )));
        exec.properties = self.properties.clone();
        Ok(exec)
    }

    fn partition_parts(&self, partition: usize, context: &TaskContext) -> Result<Partition> {
        Ok(Partition {
            aggregation: self.changelog_aggregation(partition, context)?,
            schema: self.schema.clone(),
            group_by: self.group_by.clone(),
            args: self.args.clone(),
            row_is_struct: self.row_is_struct,
            mode: self.call.mode,
            name: self.call.name.clone(),
        })
    }

    /// The same call over another input.
    fn over(&self, input: Arc<dyn ExecutionPlan>) -> TableAggregateExec {
        TableAggregateExec::new(
            input,
            self.group_by.clone(),
            self.args.clone(),
            self.call.clone(),
            self.signature,
            self.row_type.clone(),
            self.row_is_struct,
            self.schema.clone(),
        )
    }

    /// What checkpoints save this exec's state as: its changelog's accumulators, named by
    /// the call's uid.
    fn target(&self) -> Result<CheckpointTarget> {
        let name = &self.call.name;
        if self.call.mode != EmitMode::Changelog {
            return plan_err!(
                "checkpoints are on, but `{name}` emits final results, which unbounded input never has"
            );
        }
        let Some(uid) = &self.call.uid else {
            return plan_err!(
                "checkpoints are on, but the table aggregate `{name}` has no uid: give it `.uid(\"...\")` (SQL: `uid => '...'`), by which checkpoints name its accumulators"
            );
        };
        Ok(CheckpointTarget {
            uid: uid.clone(),
            function: name.clone(),
            sink: false,
        })
    }

    fn partitions(&self) -> usize {
        self.properties.output_partitioning().partition_count()
    }

    /// Partition `partition`'s aggregation for a changelog: with the disk backend and GROUP BY
    /// keys, its groups beyond the memory budget go to disk (`residency.rs`). Final results
    /// are emitted at the end of bounded input, by the engine's rules for batch queries, and
    /// keep their groups in memory.
    fn changelog_aggregation(
        &self,
        partition: usize,
        context: &TaskContext,
    ) -> Result<TableAggregation> {
        let aggregation = self.aggregation()?;
        if self.call.mode != EmitMode::Changelog {
            return Ok(aggregation);
        }
        let uid = match &self.call.uid {
            Some(uid) => uid.clone(),
            None => operator::derived_target("table-aggregate", self.computes()).uid,
        };
        let owner = GroupsOwner {
            run: &self.disk,
            uid: &uid,
            keys: &self.group_by,
            input: &self.input.schema(),
            metrics: &self.metrics,
            processors: self.partitions(),
        };
        match GroupsStore::open(owner, partition, context)? {
            Some(start) => aggregation
                .with_disk(AccumulatorsOnDisk::new(start, partition)?)
                .map_err(DataFusionError::Execution),
            None => Ok(aggregation),
        }
    }

    /// `name(args) GROUP BY keys`, for the uid of a call without one.
    fn computes(&self) -> String {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let keys: Vec<String> = self.group_by.iter().map(ToString::to_string).collect();
        format!(
            "{}({}) GROUP BY {}",
            self.call.name,
            args.join(", "),
            keys.join(", ")
        )
    }

    fn aggregation(&self) -> Result<TableAggregation> {
        let input_schema = self.input.schema();
        let key_types = self
            .group_by
            .iter()
            .map(|e| e.data_type(&input_schema))
            .collect::<Result<Vec<_>>>()?;
        TableAggregation::new(
            &self.call.name,
            self.call.function.clone(),
            self.call.spec.clone(),
            self.signature,
            self.row_type.clone(),
            &key_types,
            self.call.mode,
        )
        .map_err(DataFusionError::Execution)
    }
}

impl KeyedExec for TableAggregateExec {
    fn checkpoint_target(&self) -> Result<CheckpointTarget> {
        self.target()
    }

    fn checkpointed(
        &self,
        region: Arc<dyn ExecutionPlan>,
        sink: bool,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(
            self.checkpointed_over(region, sink || self.committing_sink)?,
        ))
    }

    fn execute_flow(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<BoxStream<'static, Result<Flow>>> {
        let Some(router) = &self.router else {
            return internal_err!("a table aggregate without checkpoints has no barriers");
        };
        let partitions = self.partitions();
        operator::run_flow(
            self.partition_parts(partition, &context)?,
            router,
            partition,
            partitions,
            context,
        )
    }

    fn keyed_input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }
}

impl DisplayAs for TableAggregateExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let keys: Vec<String> = self.group_by.iter().map(ToString::to_string).collect();
        let emit = match self.call.mode {
            EmitMode::Final => "final",
            EmitMode::Changelog => "changelog",
        };
        let strategy = if self.merge_partials {
            "merge partial accumulators"
        } else if self.router.is_some() {
            "rows routed by group key, checkpointed"
        } else {
            "whole groups per partition"
        };
        write!(
            f,
            "TableAggregateExec: {}({}) groupBy=[{}] emit={emit} ({strategy})",
            self.call.name,
            args.join(", "),
            keys.join(", ")
        )
    }
}

impl ExecutionPlan for TableAggregateExec {
    fn name(&self) -> &str {
        "TableAggregateExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        let distribution = if self.merge_partials || self.router.is_some() {
            Distribution::UnspecifiedDistribution
        } else if self.group_by.is_empty() {
            Distribution::SinglePartition
        } else {
            Distribution::KeyPartitioned(self.group_by.clone())
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
        apply_expression_roots(self.group_by.iter().chain(&self.args), f)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("TableAggregateExec takes one input");
        }
        let input = children.swap_remove(0);
        if self.router.is_some() {
            return Ok(Arc::new(
                self.checkpointed_over(input, self.committing_sink)?,
            ));
        }
        Ok(Arc::new(self.over(input)))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if let Some(router) = &self.router {
            let (parts, partitions) = (
                self.partition_parts(partition, &context)?,
                self.partitions(),
            );
            return operator::run(
                parts,
                router,
                partition,
                partitions,
                self.schema.clone(),
                context,
            );
        }
        let schema = self.schema.clone();
        let (row_is_struct, mode) = (self.row_is_struct, self.call.mode);
        let (group_by, args) = (self.group_by.clone(), self.args.clone());

        if self.merge_partials {
            let inputs = (0..self.input.output_partitioning().partition_count())
                .map(|p| Ok((self.input.execute(p, context.clone())?, self.aggregation()?)))
                .collect::<Result<Vec<_>>>()?;
            let out_schema = schema.clone();
            let stream = futures::stream::once(async move {
                let partials = futures::future::try_join_all(inputs.into_iter().map(
                    |(mut input, mut aggregation)| {
                        let (group_by, args) = (group_by.clone(), args.clone());
                        async move {
                            while let Some(batch) = input.next().await {
                                push(&mut aggregation, &group_by, &args, &batch?)?;
                            }
                            Ok::<_, DataFusionError>(aggregation)
                        }
                    },
                ))
                .await?;
                let mut partials = partials.into_iter();
                let mut total = partials.next().expect("at least two input partitions");
                for partial in partials {
                    total.merge(partial).map_err(DataFusionError::Execution)?;
                }
                let output = total.finish().map_err(DataFusionError::Execution)?;
                output_batch(&out_schema, output, row_is_struct, mode)
            });
            return Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)));
        }

        let aggregation = self.changelog_aggregation(partition, &context)?;
        let input = self.input.execute(partition, context)?;
        let out_schema = schema.clone();
        // Each input batch may emit rows (a changelog); the end of input emits the rest.
        let stream = futures::stream::try_unfold(
            (Some(input), Some(aggregation)),
            move |(mut input, mut aggregation)| {
                let (group_by, args, out_schema) =
                    (group_by.clone(), args.clone(), out_schema.clone());
                async move {
                    let Some(state) = aggregation.as_mut() else {
                        return Ok(None);
                    };
                    while let Some(stream) = input.as_mut() {
                        match stream.next().await {
                            Some(batch) => {
                                if let Some(output) = push(state, &group_by, &args, &batch?)?
                                    && !output.kinds.is_empty()
                                {
                                    let batch =
                                        output_batch(&out_schema, output, row_is_struct, mode)?;
                                    return Ok(Some((batch, (input, aggregation))));
                                }
                            }
                            None => input = None,
                        }
                    }
                    let output = state.finish().map_err(DataFusionError::Execution)?;
                    let batch = output_batch(&out_schema, output, row_is_struct, mode)?;
                    Ok(Some((batch, (None, None))))
                }
            },
        );
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            stream.into_stream(),
        )))
    }
}
