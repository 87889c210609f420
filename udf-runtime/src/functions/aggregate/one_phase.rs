//! One-phase aggregation for functions without `merge`.
//!
//! Over several partitions DataFusion aggregates in two phases: a partial aggregate per
//! partition, then a final one that folds the partial accumulators together with `merge`.
//! A function without `merge` cannot take part in that, so — as Flink skips local-global
//! aggregation for such functions — its aggregation runs in one phase instead: rows are
//! hash-partitioned by the group keys and each partition aggregates whole groups, or, without
//! GROUP BY (or with grouping sets), all rows are gathered into one partition.
//!
//! DISTINCT calls are exempt: their partials are sets of argument rows, combined by union.
//!
//! This is a physical optimizer rule placed right after DataFusion's
//! `CombinePartialFinalAggregate`, so that EXPLAIN shows the plan that runs.

use std::any::Any;
use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::config::ConfigOptions;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties, Partitioning};

use super::capabilities::{self, ours};
use super::group_keys::GroupKeysForErrors;

/// The rule; it also reports a partial aggregation it could not replace.
#[derive(Debug, Default)]
pub struct OnePhaseWithoutMerge;

impl OnePhaseWithoutMerge {
    /// DataFusion's default physical optimizer rules with this one after
    /// `CombinePartialFinalAggregate` (or last, should that rule ever be renamed), and
    /// [`GroupKeysForErrors`] before the sanity check (or last).
    pub fn with_default_rules() -> Vec<Arc<dyn PhysicalOptimizerRule + Send + Sync>> {
        let mut rules = datafusion::physical_optimizer::optimizer::PhysicalOptimizer::new().rules;
        let at = rules
            .iter()
            .position(|rule| rule.name() == "CombinePartialFinalAggregate")
            .map_or(rules.len(), |at| at + 1);
        rules.insert(at, Arc::new(OnePhaseWithoutMerge));
        let at = rules
            .iter()
            .position(|rule| rule.name() == "SanityCheckPlan")
            .unwrap_or(rules.len());
        rules.insert(at, Arc::new(GroupKeysForErrors));
        rules
    }
}

impl PhysicalOptimizerRule for OnePhaseWithoutMerge {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = without_partial_merges(plan)?;
        capabilities::check_partial_aggregates(&plan)?;
        Ok(plan)
    }

    fn name(&self) -> &str {
        "udf_one_phase_without_merge"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Replaces each partial → final aggregation that folds the accumulators of a function
/// without `merge` by a one-phase aggregation of the same rows.
pub fn without_partial_merges(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        let Some(last) = (node.as_ref() as &dyn Any).downcast_ref::<AggregateExec>() else {
            return Ok(Transformed::no(node));
        };
        if !matches!(
            last.mode(),
            AggregateMode::Final | AggregateMode::FinalPartitioned
        ) {
            return Ok(Transformed::no(node));
        }
        let Some(partial) = partial_below(last.input()) else {
            return Ok(Transformed::no(node));
        };
        if !needs_merge_it_lacks(partial) {
            return Ok(Transformed::no(node));
        }
        let one_phase = one_phase(partial)?.with_limit_options(last.limit_options());
        // Same columns as the two phases gave, or the plan stays (and the capability check
        // that follows planning reports the missing `merge`).
        if one_phase.schema().fields() != last.schema().fields() {
            return Ok(Transformed::no(node));
        }
        Ok(Transformed::yes(Arc::new(one_phase)))
    })
    .map(|t| t.data)
}

/// The partial aggregate feeding a final one, through the nodes that move rows between
/// partitions or keep them sorted.
pub(super) fn partial_below(plan: &Arc<dyn ExecutionPlan>) -> Option<&AggregateExec> {
    let any = plan.as_ref() as &dyn Any;
    if let Some(aggregate) = any.downcast_ref::<AggregateExec>() {
        return matches!(aggregate.mode(), AggregateMode::Partial).then_some(aggregate);
    }
    let passes_rows = any.is::<RepartitionExec>()
        || any.is::<CoalescePartitionsExec>()
        || any.is::<SortPreservingMergeExec>()
        || any.is::<SortExec>();
    match plan.children().as_slice() {
        [child] if passes_rows => partial_below(child),
        _ => None,
    }
}

/// Whether the partial aggregate computes a call whose accumulators would need `merge`.
fn needs_merge_it_lacks(partial: &AggregateExec) -> bool {
    partial.aggr_expr().iter().any(|call| {
        !call.is_distinct() && ours(call.fun()).is_some_and(|udf| !udf.spec().capabilities.merge)
    })
}

fn one_phase(partial: &AggregateExec) -> Result<AggregateExec> {
    let input = Arc::clone(partial.input());
    let group_by = partial.group_expr().clone();
    let partitions = input.output_partitioning().partition_count();
    let (mode, input): (_, Arc<dyn ExecutionPlan>) = if partitions <= 1 {
        (AggregateMode::Single, input)
    } else if group_by.is_single() && !group_by.is_empty() {
        let keys = Partitioning::Hash(group_by.input_exprs(), partitions);
        (
            AggregateMode::SinglePartitioned,
            Arc::new(RepartitionExec::try_new(input, keys)?),
        )
    } else {
        (
            AggregateMode::Single,
            Arc::new(CoalescePartitionsExec::new(input)),
        )
    };
    AggregateExec::try_new(
        mode,
        group_by,
        partial.aggr_expr().to_vec(),
        partial.filter_expr().to_vec(),
        input,
        partial.input_schema(),
    )
}
