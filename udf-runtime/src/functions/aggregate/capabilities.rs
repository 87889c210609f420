//! Planning errors for queries that need an ability an aggregate function lacks, naming
//! both: a bounded OVER frame needs `retract`, partial aggregation needs `merge`.

use std::any::Any;
use std::sync::Arc;

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::expr::WindowFunction;
use datafusion::logical_expr::{AggregateUDF, Expr, LogicalPlan, WindowFunctionDefinition};
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};

use super::udf::AggregateUdf;

pub(crate) fn ours(udaf: &AggregateUDF) -> Option<&AggregateUdf> {
    (udaf.inner().as_ref() as &dyn Any).downcast_ref::<AggregateUdf>()
}

/// Every OVER window with a frame that does not grow from the partition start calls
/// `retract` for rows leaving the frame.
pub fn check_window_frames(plan: &LogicalPlan) -> Result<()> {
    let mut error = None;
    plan.apply_with_subqueries(|node| {
        if let LogicalPlan::Window(window) = node {
            for expr in &window.window_expr {
                if let Expr::WindowFunction(call) = expr.clone().unalias_nested().data {
                    let WindowFunction { fun, params } = call.as_ref();
                    if let WindowFunctionDefinition::AggregateUDF(udaf) = fun
                        && let Some(udf) = ours(udaf)
                        && !udf.spec().capabilities.retract
                        && !params.window_frame.is_ever_expanding()
                    {
                        error = Some(format!(
                            "aggregate function `{}` has no `retract`, which the window frame `{}` needs for rows that leave the frame; implement `retract` or use a frame starting at UNBOUNDED PRECEDING",
                            udaf.name(),
                            params.window_frame
                        ));
                        return Ok(TreeNodeRecursion::Stop);
                    }
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    match error {
        Some(message) => plan_err!("{message}"),
        None => Ok(()),
    }
}

/// A partial aggregation (one per input partition, combined later) folds partial
/// accumulators together with `merge`. Planning replaces such aggregations by one phase
/// where it can (`one_phase`); this reports any it could not. DISTINCT calls are exempt:
/// their partials are sets of argument rows, combined by union.
pub fn check_partial_aggregates(plan: &Arc<dyn ExecutionPlan>) -> Result<()> {
    let mut error = None;
    plan.apply(|node| {
        if let Some(aggregate) = (node.as_ref() as &dyn Any).downcast_ref::<AggregateExec>()
            && matches!(aggregate.mode(), AggregateMode::Partial)
        {
            for call in aggregate.aggr_expr() {
                if let Some(udf) = ours(call.fun())
                    && !udf.spec().capabilities.merge
                    && !call.is_distinct()
                {
                    error = Some(format!(
                        "aggregate function `{}` has no `merge`, which this query needs to combine the partial aggregates of {} input partitions; implement `merge` or run the query with one partition",
                        call.fun().name(),
                        aggregate.input().output_partitioning().partition_count()
                    ));
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    match error {
        Some(message) => plan_err!("{message}"),
        None => Ok(()),
    }
}
