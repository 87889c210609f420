//! The physical optimizer rule that hands each GROUP BY call of our aggregate functions its
//! group keys: the call's arguments get the GROUP BY expressions appended, and a partial
//! aggregation passes them to the final one as extra state columns.
//!
//! It runs last but for DataFusion's sanity check, after every rule that rebuilds
//! aggregations, and it leaves alone what it cannot rewrite exactly (grouping sets, DISTINCT,
//! ordered calls): those errors show the accumulator but no key.

use std::any::Any;
use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::config::ConfigOptions;
use datafusion::physical_expr::aggregate::{AggregateExprBuilder, AggregateFunctionExpr};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};

use crate::functions::aggregate::one_phase::partial_below;

/// The rule (see the module's comment).
#[derive(Debug, Default)]
pub struct GroupKeysForErrors;

impl PhysicalOptimizerRule for GroupKeysForErrors {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(aggregate) = (node.as_ref() as &dyn Any).downcast_ref::<AggregateExec>()
            else {
                return Ok(Transformed::no(node));
            };
            let rewritten = match aggregate.mode() {
                // Rewritten with the final aggregation above it, which reads its states
                // (one above a partial reduction stays as it is, as does the reduction).
                AggregateMode::Partial | AggregateMode::PartialReduce => None,
                AggregateMode::Single | AggregateMode::SinglePartitioned => keyed_calls(aggregate)?
                    .map(|calls| with_calls(aggregate, calls, Arc::clone(aggregate.input()))),
                AggregateMode::Final | AggregateMode::FinalPartitioned => {
                    match partial_below(aggregate.input()) {
                        Some(partial) => match keyed_calls(partial)? {
                            Some(calls) => {
                                let new_partial = Arc::new(with_calls(
                                    partial,
                                    calls.clone(),
                                    Arc::clone(partial.input()),
                                )?);
                                let input = above(aggregate.input(), new_partial)?;
                                Some(with_calls(aggregate, calls, input))
                            }
                            None => None,
                        },
                        None => None,
                    }
                }
            };
            match rewritten {
                Some(rewritten) => Ok(Transformed::yes(Arc::new(rewritten?) as _)),
                None => Ok(Transformed::no(node)),
            }
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "udf_group_keys_for_errors"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// The calls of `aggregate` with the keys appended to each call of ours, or `None` if there
/// is nothing to rewrite.
fn keyed_calls(aggregate: &AggregateExec) -> Result<Option<Vec<Arc<AggregateFunctionExpr>>>> {
    let group_by = aggregate.group_expr();
    if group_by.is_empty() || !group_by.is_single() {
        return Ok(None);
    }
    let keys = group_by.input_exprs();
    let mut changed = false;
    let mut calls = Vec::with_capacity(aggregate.aggr_expr().len());
    for call in aggregate.aggr_expr() {
        match keyed(call, &keys, aggregate)? {
            Some(keyed) => {
                changed = true;
                calls.push(Arc::new(keyed));
            }
            None => calls.push(Arc::clone(call)),
        }
    }
    Ok(changed.then_some(calls))
}

fn keyed(
    call: &AggregateFunctionExpr,
    keys: &[Arc<dyn datafusion::physical_plan::PhysicalExpr>],
    aggregate: &AggregateExec,
) -> Result<Option<AggregateFunctionExpr>> {
    if call.is_distinct() || !call.order_bys().is_empty() {
        return Ok(None);
    }
    let Some(keyed_function) = super::with_group_keys(call.fun(), keys.len()) else {
        return Ok(None);
    };
    let mut args = call.expressions();
    args.extend(keys.iter().cloned());
    let mut builder = AggregateExprBuilder::new(Arc::new(keyed_function), args)
        .schema(aggregate.input_schema())
        .alias(call.name())
        .with_ignore_nulls(call.ignore_nulls())
        .with_reversed(call.is_reversed());
    if let Some(display) = call.human_display() {
        builder = builder.human_display(display);
    }
    if let Some(alias) = call.human_display_alias() {
        builder = builder.human_display_alias(alias);
    }
    let keyed = builder.build()?;
    // The same result column, or the call stays as it was.
    Ok((keyed.field() == call.field()).then_some(keyed))
}

/// `aggregate` with other calls, over `input`.
fn with_calls(
    aggregate: &AggregateExec,
    calls: Vec<Arc<AggregateFunctionExpr>>,
    input: Arc<dyn ExecutionPlan>,
) -> Result<AggregateExec> {
    Ok(AggregateExec::try_new(
        *aggregate.mode(),
        aggregate.group_expr().clone(),
        calls,
        aggregate.filter_expr().to_vec(),
        input,
        aggregate.input_schema(),
    )?
    .with_limit_options(aggregate.limit_options()))
}

/// The nodes between a final aggregation and its partial one (see `partial_below`), over
/// `partial` instead.
fn above(
    plan: &Arc<dyn ExecutionPlan>,
    partial: Arc<dyn ExecutionPlan>,
) -> Result<Arc<dyn ExecutionPlan>> {
    if (plan.as_ref() as &dyn Any).is::<AggregateExec>() {
        return Ok(partial);
    }
    let child = above(plan.children()[0], partial)?;
    let recompute = ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute);
    Arc::clone(plan).replace_children(vec![child], recompute)
}
