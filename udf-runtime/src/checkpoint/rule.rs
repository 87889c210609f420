//! Which plans can be checkpointed, decided when the plan is made (a physical optimizer rule
//! that runs last). With checkpoints on, a query over unbounded input keeps its state in one
//! keyed operator — a process table function or table aggregate with a `uid`, or an updating
//! GROUP BY, window aggregate or OVER window (whose uid comes from what it computes); between its sources
//! and it stand only operators that
//! pass barriers in order (`region.rs`) — DataFusion's repartitioning and batch coalescing
//! there are taken out, since the operator routes rows by key itself — and above it only
//! operators that keep nothing across batches. Anything else is a planning error naming the
//! operator: a checkpoint that silently missed some state would restore wrong answers.

use std::any::Any;
use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, plan_err};
use datafusion::config::ConfigOptions;
use datafusion::datasource::sink::DataSinkExec;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::coop::CooperativeExec;
use datafusion::physical_plan::execution_plan::Boundedness;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, ExecutionPlan, ExecutionPlanProperties, ReplaceChildrenOptions,
};

use super::config::CheckpointConfig;
use super::keyed_execs::keyed_exec;
use super::region;
use crate::ops::ptf::exec::PtfExec;
use crate::ops::sink::exec::CommittingSinkExec;
use crate::ops::sink::sink_input_passes;

#[derive(Debug, Default)]
pub struct CheckpointedPlans;

const ON: &str =
    "checkpoints are on (execution.checkpointing.interval or execution.state-recovery.path)";

impl PhysicalOptimizerRule for CheckpointedPlans {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !CheckpointConfig::of(config).enabled() {
            return Ok(plan);
        }
        let mut stateful = 0;
        plan.apply(|node| {
            stateful += usize::from(keeps_state(node.as_ref()));
            Ok(TreeNodeRecursion::Continue)
        })?;
        match stateful {
            // A bounded query without one runs as a batch job, which Flink does not
            // checkpoint either.
            0 if matches!(plan.boundedness(), Boundedness::Bounded) => return Ok(plan),
            0 => {
                return plan_err!(
                    "{ON}, but this query over unbounded input has no process table function, table aggregate, GROUP BY, window aggregate or OVER window: checkpoints cover the state of one such operator per query so far"
                );
            }
            1 => {}
            n => {
                return plan_err!(
                    "{ON}, but this query has {n} operators that keep state (process table functions, table aggregates, GROUP BYs, windows): checkpoints cover one per query so far"
                );
            }
        }
        plan.transform_down(|node| {
            if let Some(sink) = (node.as_ref() as &dyn Any).downcast_ref::<DataSinkExec>() {
                if CheckpointConfig::of(config).dir.is_none() {
                    return plan_err!(
                        "{ON}, and `INSERT INTO` commits its files with checkpoints, but execution.checkpointing.dir is not set: a run that only restores writes no checkpoint"
                    );
                }
                let committing = committing_sink(sink)?;
                return Ok(Transformed::new(committing, true, TreeNodeRecursion::Jump));
            }
            if let Some(keyed) = keyed_exec(node.as_ref()) {
                keyed.checkpoint_target()?;
                let region = region_of(keyed.keyed_input().clone())?;
                let node = keyed.checkpointed(region, false)?;
                return Ok(Transformed::new(node, true, TreeNodeRecursion::Jump));
            }
            let Some(function) = (node.as_ref() as &dyn Any).downcast_ref::<PtfExec>() else {
                if let Some(reason) = above(node.as_ref()) {
                    return plan_err!("{ON}: {reason}");
                }
                return Ok(Transformed::no(node));
            };
            function.checkpoint_target()?;
            let inputs = node
                .children()
                .into_iter()
                .map(|input| region_of(input.clone()))
                .collect::<Result<Vec<_>>>()?;
            let recompute = ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute);
            let node = node.clone().replace_children(inputs, recompute)?;
            Ok(Transformed::new(node, true, TreeNodeRecursion::Jump))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "CheckpointedPlans"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `INSERT INTO` with checkpoints: the committing sink over the function's output, the
/// function told that its checkpoints wait for the sink.
fn committing_sink(sink: &DataSinkExec) -> Result<Arc<dyn ExecutionPlan>> {
    let mut uid = None;
    let input = sink.input().clone().transform_down(|node| {
        if let Some(keyed) = keyed_exec(node.as_ref()) {
            uid = Some(keyed.checkpoint_target()?.uid);
            let region = region_of(keyed.keyed_input().clone())?;
            let node = keyed.checkpointed(region, true)?;
            return Ok(Transformed::new(node, true, TreeNodeRecursion::Jump));
        }
        if let Some(function) = (node.as_ref() as &dyn Any).downcast_ref::<PtfExec>() {
            uid = Some(function.checkpoint_target()?.uid);
            let inputs = node
                .children()
                .into_iter()
                .map(|input| region_of(input.clone()))
                .collect::<Result<Vec<_>>>()?;
            let node: Arc<dyn ExecutionPlan> = Arc::new(function.with_committing_sink(inputs));
            return Ok(Transformed::new(node, true, TreeNodeRecursion::Jump));
        }
        // The sink writes each of the function's partitions on its own (a key's rows stay in
        // order in one of them): merging them is not needed.
        let any = node.as_ref() as &dyn Any;
        if any.is::<CoalescePartitionsExec>() || coalesces_or_repartitions(node.as_ref()) {
            let child = node.children()[0].clone();
            return Ok(Transformed::yes(child));
        }
        if !sink_input_passes(node.as_ref()) {
            return plan_err!(
                "{ON}: `{}` between the process table function and the table written cannot pass checkpoint barriers in order with its rows (projections and filters can)",
                node.name()
            );
        }
        Ok(Transformed::no(node))
    })?;
    let Some(uid) = uid else {
        return plan_err!(
            "{ON}, but the rows written come from no process table function, table aggregate or GROUP BY: INSERT INTO commits with checkpoints the output of one"
        );
    };
    Ok(Arc::new(CommittingSinkExec::try_new(
        sink, input.data, &uid,
    )?))
}

/// The input of the stateful operator without repartitioning, coalescing and cooperative
/// yielding, checked.
fn region_of(input: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    let stripped = input.transform_down(|node| {
        if coalesces_or_repartitions(node.as_ref()) {
            let child = node.children()[0].clone();
            return Ok(Transformed::yes(child));
        }
        Ok(Transformed::no(node))
    })?;
    let stripped = stripped.data;
    stripped.apply(|node| match region::refusal(node.as_ref()) {
        Some(reason) => plan_err!("{ON}: {reason}"),
        None => Ok(TreeNodeRecursion::Continue),
    })?;
    Ok(stripped)
}

/// Whether `plan` keeps state that checkpoints save: a process table function, or another
/// keyed operator over unbounded input.
fn keeps_state(plan: &dyn ExecutionPlan) -> bool {
    (plan as &dyn Any).is::<PtfExec>() || keyed_exec(plan).is_some()
}

/// Why `plan`, above the stateful operator, cannot be in a checkpointed query.
fn above(plan: &dyn ExecutionPlan) -> Option<String> {
    let any = plan as &dyn Any;
    let passes = any.is::<ProjectionExec>()
        || any.is::<FilterExec>()
        || any.is::<CoalescePartitionsExec>()
        || coalesces_or_repartitions(plan);
    (!passes).then(|| {
        format!(
            "`{}` after the process table function keeps rows across batches, which checkpoints do not cover yet",
            plan.name()
        )
    })
}

/// Repartitioning, batch coalescing and cooperative yielding: only there for speed and
/// fairness, which the function's own routing (and the barrier-aware source, which waits on
/// channels) gives.
fn coalesces_or_repartitions(plan: &dyn ExecutionPlan) -> bool {
    // `CoalesceBatchesExec` is deprecated, but plans made elsewhere may still hold one.
    matches!(plan.name(), "CoalesceBatchesExec")
        || (plan as &dyn Any).is::<RepartitionExec>()
        || (plan as &dyn Any).is::<CooperativeExec>()
}
