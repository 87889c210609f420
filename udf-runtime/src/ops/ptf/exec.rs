//! `ProcessTableFunctionExec`: one virtual processor per output partition.
//!
//! Set semantics with PARTITION BY: the exec routes rows by key hash to the session's target
//! partitions (router.rs), so equal keys meet in one processor (rule 19 of docs/semantics.md) —
//! with several table arguments, equal keys of every table (they are co-partitioned). Without
//! PARTITION BY one processor sees everything; row semantics keep the input's partitions. Each
//! processor (`driver/`) calls `eval` in input order, with typed state per key slot.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, internal_err, plan_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{
    Boundedness, EmissionType, apply_expression_roots,
};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    InputDistributionRequirements, PlanProperties,
};
use udf_core::Semantics;

use super::call::PtfCall;
use super::disk_run::DiskRuns;
use super::driver::{Driver, ProcessorMetrics};
use super::input::PtfInput;
use super::node::describe;
use crate::checkpoint::coordinator::CheckpointTarget;
use crate::ops::routing::router::{Inbox, Router, RouterInput, Stamped, restore_processor};
use crate::ops::routing::shuffle::{ROUTE, ShuffleStampExec, stamp_routing_to, stamped_sources};
use crate::session::state_backend::StateBackendConfig;

#[derive(Debug)]
pub struct PtfExec {
    inputs: Vec<PtfInput>,
    call: PtfCall,
    schema: SchemaRef,
    /// Processors when routing by key (the session's target partitions).
    processors: usize,
    router: Arc<Router>,
    /// Whether a committing sink takes the output (its checkpoints wait for the sink).
    committing_sink: bool,
    /// The disk store of the current run, with the disk backend.
    disk: Arc<DiskRuns>,
    /// Planned for a cluster: rows with set semantics arrive hash-partitioned by key (a
    /// shuffle the plan shows), and processor `p` reads its input's partition `p`.
    on_cluster: bool,
    /// On a cluster with a time attribute: each table's source partitions, whose rows were
    /// stamped with their watermarks before the shuffle (`shuffle/`).
    stamped: Option<Vec<usize>>,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

/// How rows reach the processors.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Routing {
    /// By a hash of the PARTITION BY keys.
    ByKey,
    /// All to one processor (no PARTITION BY, or no table).
    Single,
    /// Where they are (row semantics).
    AsIs,
}

impl PtfExec {
    pub fn new(inputs: Vec<PtfInput>, call: PtfCall, schema: SchemaRef, processors: usize) -> Self {
        Self::build(inputs, call, schema, processors, false, false, None)
    }

    /// The exec of a plan for a cluster: each input is hash-partitioned by its PARTITION BY
    /// keys upstream (cast to the key types the tables share, so equal keys of several
    /// tables meet in one partition), so that the cluster cuts a stage there and each task
    /// runs one processor over its partition of each input. With a time attribute each
    /// table's rows are stamped with their watermarks before the shuffle (`shuffle/`), so
    /// a processor's watermark still combines those of every source partition.
    pub fn on_cluster(
        mut inputs: Vec<PtfInput>,
        call: PtfCall,
        schema: SchemaRef,
        processors: usize,
    ) -> Self {
        let timed = call.tables.iter().any(|t| t.event_time.is_some());
        let stamped = (timed && routing(&call, &inputs) == Routing::ByKey).then(|| {
            inputs
                .iter_mut()
                .enumerate()
                .map(|(index, input)| {
                    let sources = input.plan.output_partitioning().partition_count();
                    input.plan = Arc::new(ShuffleStampExec::new(
                        input.plan.clone(),
                        input.keys.clone(),
                        call.tables.get(index).and_then(|t| t.event_time.clone()),
                        processors,
                    ));
                    sources
                })
                .collect()
        });
        Self::build(inputs, call, schema, processors, false, true, stamped)
    }

    /// A cluster's exec as it was encoded: its inputs stamped already, if `stamped`.
    pub(crate) fn on_cluster_as_planned(
        inputs: Vec<PtfInput>,
        call: PtfCall,
        schema: SchemaRef,
        processors: usize,
        stamped: Option<Vec<usize>>,
    ) -> Self {
        Self::build(inputs, call, schema, processors, false, true, stamped)
    }

    /// This exec with its output taken by a committing sink.
    pub fn with_committing_sink(&self, inputs: Vec<Arc<dyn ExecutionPlan>>) -> Self {
        let inputs = self
            .inputs
            .iter()
            .zip(inputs)
            .map(|(input, plan)| PtfInput {
                plan,
                ..input.clone()
            })
            .collect();
        Self::build(
            inputs,
            self.call.clone(),
            self.schema.clone(),
            self.processors,
            true,
            self.on_cluster,
            self.stamped.clone(),
        )
    }

    fn build(
        mut inputs: Vec<PtfInput>,
        call: PtfCall,
        schema: SchemaRef,
        processors: usize,
        committing_sink: bool,
        on_cluster: bool,
        stamped: Option<Vec<usize>>,
    ) -> Self {
        let routing = routing(&call, &inputs);
        // Until the cluster cuts its stages, the stamps are in sight: their sources count,
        // and they route to as many processors as the shuffle made partitions (none, from
        // one partition: then one processor takes every row).
        let stamped = stamped.map(|known| {
            inputs
                .iter_mut()
                .zip(known)
                .map(|(input, known)| {
                    let partitions = input.plan.output_partitioning().partition_count();
                    if let Some(plan) = stamp_routing_to(&input.plan, partitions) {
                        input.plan = plan;
                    }
                    stamped_sources(&input.plan).unwrap_or(known)
                })
                .collect::<Vec<_>>()
        });
        let partitions = match routing {
            Routing::Single => 1,
            Routing::ByKey if on_cluster => inputs[0].plan.output_partitioning().partition_count(),
            Routing::ByKey => processors.max(1),
            Routing::AsIs => inputs[0].plan.output_partitioning().partition_count(),
        };
        let router_inputs = inputs
            .iter()
            .enumerate()
            .map(|(index, input)| RouterInput {
                plan: input.plan.clone(),
                keys: match routing {
                    Routing::ByKey => input.keys.clone(),
                    Routing::Single | Routing::AsIs => Vec::new(),
                },
                event_time: call.tables.get(index).and_then(|t| t.event_time.clone()),
                stamped: stamped.as_ref().map(|sources| Stamped {
                    sources: sources[index],
                    function: call.name.clone(),
                }),
            })
            .collect();
        let checkpoint = checkpoint_target(&call, routing)
            .ok()
            .map(|target| CheckpointTarget {
                sink: committing_sink,
                ..target
            });
        // On a cluster, keyed rows arrive partitioned: each processor reads its own partition.
        let router = Arc::new(Router::new(
            router_inputs,
            partitions,
            routing == Routing::AsIs || (on_cluster && routing == Routing::ByKey),
            checkpoint,
        ));
        let bounded = if inputs
            .iter()
            .all(|i| matches!(i.plan.boundedness(), Boundedness::Bounded))
        {
            Boundedness::Bounded
        } else {
            Boundedness::Unbounded {
                requires_infinite_memory: false,
            }
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            bounded,
        ));
        PtfExec {
            inputs,
            call,
            schema,
            processors,
            router,
            committing_sink,
            disk: Arc::default(),
            on_cluster,
            stamped,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    fn routing(&self) -> Routing {
        routing(&self.call, &self.inputs)
    }

    pub(crate) fn inputs(&self) -> &[PtfInput] {
        &self.inputs
    }

    pub(crate) fn call(&self) -> &PtfCall {
        &self.call
    }

    /// The session's target partitions, which a local plan routes rows to.
    pub(crate) fn processors(&self) -> usize {
        self.processors
    }

    pub(crate) fn committing_sink(&self) -> bool {
        self.committing_sink
    }

    pub(crate) fn is_on_cluster(&self) -> bool {
        self.on_cluster
    }

    /// Each table's source partitions, stamped before a cluster's shuffle.
    pub(crate) fn stamped(&self) -> Option<&[usize]> {
        self.stamped.as_deref()
    }

    /// What checkpoints save of this call; a planning error if they cannot.
    pub fn checkpoint_target(&self) -> Result<CheckpointTarget> {
        checkpoint_target(&self.call, self.routing())
    }
}

fn checkpoint_target(call: &PtfCall, routing: Routing) -> Result<CheckpointTarget> {
    let name = &call.name;
    if routing == Routing::AsIs {
        return plan_err!(
            "checkpoints are on, but `{name}` takes its table with row semantics: checkpoints cover functions with set semantics so far"
        );
    }
    let Some(uid) = &call.uid else {
        return plan_err!(
            "checkpoints are on, but the call of `{name}` has no uid: give it `uid => '...'`, the name its state is saved and found again under"
        );
    };
    Ok(CheckpointTarget {
        uid: uid.clone(),
        function: name.clone(),
        sink: false,
    })
}

fn routing(call: &PtfCall, inputs: &[PtfInput]) -> Routing {
    match call.tables.first() {
        Some(table) if table.semantics == Semantics::Row => Routing::AsIs,
        Some(_) if inputs.iter().any(|i| !i.keys.is_empty()) => Routing::ByKey,
        _ => Routing::Single,
    }
}

impl PtfExec {
    /// The first PTF exec in `plan`.
    pub(super) fn find(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
        let mut found = None;
        let _ = plan.apply(|node| {
            if (node.as_ref() as &dyn std::any::Any).is::<PtfExec>() {
                found = Some(node.clone());
                return Ok(TreeNodeRecursion::Stop);
            }
            Ok(TreeNodeRecursion::Continue)
        });
        found
    }

    /// A processor of this exec reading `sources` partitions of each input, fed by the
    /// caller (the test harness, driver tests).
    pub(super) fn driver(&self, context: &TaskContext, sources: &[usize]) -> Result<Driver> {
        let disk = self.disk.share(
            &self.call,
            &StateBackendConfig::of(context.session_config().options()),
            0,
            1,
        )?;
        Driver::new(
            &self.call,
            &self.inputs,
            &self.schema,
            ProcessorMetrics::new(&self.metrics, 0),
            context,
            sources,
            disk,
        )
    }
}

impl DisplayAs for PtfExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let processors = self.properties.output_partitioning().partition_count();
        let routing = match self.routing() {
            Routing::ByKey if self.stamped.is_some() => {
                "rows partitioned by key upstream, stamped with their watermarks"
            }
            Routing::ByKey if self.on_cluster => "rows partitioned by key upstream",
            Routing::ByKey => "rows routed by key hash",
            Routing::Single => "one processor",
            Routing::AsIs => "rows processed where they are",
        };
        write!(
            f,
            "ProcessTableFunctionExec: {} processors={processors} ({routing})",
            describe(&self.call)
        )
    }
}

impl ExecutionPlan for PtfExec {
    fn name(&self) -> &str {
        "ProcessTableFunctionExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        if self.stamped.is_some() {
            // A shuffle on the route each row was stamped with.
            return InputDistributionRequirements::new(
                self.inputs
                    .iter()
                    .map(|input| {
                        let route = input.plan.schema().index_of(ROUTE).map(|index| {
                            Arc::new(Column::new(ROUTE, index)) as Arc<dyn PhysicalExpr>
                        });
                        match route {
                            Ok(route) => Distribution::KeyPartitioned(vec![route]),
                            // Not stamped: `processor` says so when the plan runs.
                            Err(_) => Distribution::UnspecifiedDistribution,
                        }
                    })
                    .collect(),
            );
        }
        if self.on_cluster && self.routing() == Routing::ByKey {
            // A shuffle the cluster sees and cuts a stage at.
            return InputDistributionRequirements::new(
                self.inputs
                    .iter()
                    .map(|input| Distribution::KeyPartitioned(input.keys.clone()))
                    .collect(),
            );
        }
        // The exec routes rows to its processors itself, watermarks with them.
        InputDistributionRequirements::new(vec![
            Distribution::UnspecifiedDistribution;
            self.inputs.len()
        ])
    }

    /// Each processor sees its rows in input order (rule 32 of docs/semantics.md with one processor).
    fn maintains_input_order(&self) -> Vec<bool> {
        vec![false; self.inputs.len()]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false; self.inputs.len()]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.inputs.iter().map(|input| &input.plan).collect()
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        apply_expression_roots(
            self.inputs
                .iter()
                .flat_map(|input| input.keys.iter().chain(&input.row)),
            f,
        )
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != self.inputs.len() {
            return internal_err!(
                "ProcessTableFunctionExec takes {} input(s), not {}",
                self.inputs.len(),
                children.len()
            );
        }
        let inputs = self
            .inputs
            .iter()
            .zip(children)
            .map(|(input, plan)| PtfInput {
                plan,
                ..input.clone()
            })
            .collect();
        Ok(Arc::new(PtfExec::build(
            inputs,
            self.call.clone(),
            self.schema.clone(),
            self.processors,
            self.committing_sink,
            self.on_cluster,
            self.stamped.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let (driver, inbox) = self.processor(partition, context)?;
        Ok(driver.run(inbox, self.schema.clone()))
    }
}

impl PtfExec {
    /// Processor `partition`'s output with a barrier after each checkpoint it saved, for a
    /// committing sink.
    pub fn execute_flow(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<futures::stream::BoxStream<'static, Result<crate::checkpoint::barrier::Flow>>> {
        let (driver, inbox) = self.processor(partition, context)?;
        Ok(driver.run_flow(inbox))
    }

    /// Processor `partition`, its state restored when the run restores, and its inbox.
    fn processor(&self, partition: usize, context: Arc<TaskContext>) -> Result<(Driver, Inbox)> {
        if self.on_cluster && self.routing() == Routing::ByKey {
            let processors = self.properties.output_partitioning().partition_count();
            if let Some(input) = self
                .inputs
                .iter()
                .find(|input| input.plan.output_partitioning().partition_count() != processors)
            {
                return internal_err!(
                    "`{}`: a table argument arrived in {} partitions, not the {processors} the others have",
                    self.call.name,
                    input.plan.output_partitioning().partition_count()
                );
            }
        }
        let inbox = self.router.inbox(partition, context.clone())?;
        let disk = self.disk.share(
            &self.call,
            &StateBackendConfig::of(context.session_config().options()),
            partition,
            self.properties.output_partitioning().partition_count(),
        )?;
        let mut driver = Driver::new(
            &self.call,
            &self.inputs,
            &self.schema,
            ProcessorMetrics::new(&self.metrics, partition),
            &context,
            &inbox.sources,
            disk,
        )?;
        driver.processor = partition;
        if let Some(coordinator) = &inbox.coordinator {
            let processors = self.properties.output_partitioning().partition_count();
            restore_processor(
                coordinator,
                &self.call.name,
                partition,
                processors,
                |state, part| match part {
                    None => driver.restore(state),
                    Some((index, keep)) => driver.restore_part(state, index, keep),
                },
            )?;
        }
        Ok((driver, inbox))
    }
}
