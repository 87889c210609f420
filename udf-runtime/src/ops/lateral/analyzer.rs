//! Moves a table function call from the right side of a join onto its left side:
//! `Join(left, [alias/subquery/renaming] LateralNode(one row, call))` becomes
//! `LateralNode(left, call)`, the call's outer references turned into columns of `left`.
//! Runs before DataFusion's own analyzer rules, which do not accept the outer references.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Result, ScalarValue, plan_err};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, Extension, Filter, JoinType, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;

use super::node::{LateralJoin, LateralNode};

#[derive(Debug, Default)]
pub struct LateralJoins;

impl AnalyzerRule for LateralJoins {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(join_to_lateral)
            .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "udf_lateral_joins"
    }
}

/// The standalone call at the bottom of a join's right side, under nothing but aliases,
/// subquery wrappers and column renamings.
fn lateral_call(plan: &LogicalPlan) -> Option<&LateralNode> {
    match plan {
        LogicalPlan::SubqueryAlias(alias) => lateral_call(&alias.input),
        LogicalPlan::Subquery(subquery) => lateral_call(&subquery.subquery),
        LogicalPlan::Projection(projection) => {
            let input = projection.input.schema();
            let renames = projection.expr.len() == input.fields().len()
                && projection.expr.iter().enumerate().all(|(i, expr)| {
                    let (qualifier, field) = input.qualified_field(i);
                    matches!(expr.clone().unalias(), Expr::Column(c)
                        if c.name == *field.name() && (c.relation.is_none() || c.relation.as_ref() == qualifier))
                });
            renames.then(|| lateral_call(&projection.input)).flatten()
        }
        LogicalPlan::Extension(extension) => {
            let node = extension.node.as_any().downcast_ref::<LateralNode>()?;
            node.is_standalone().then_some(node)
        }
        _ => None,
    }
}

fn is_true(expr: &Expr) -> bool {
    matches!(expr, Expr::Literal(ScalarValue::Boolean(Some(true)), _))
}

fn join_to_lateral(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Join(join) = &plan else {
        return Ok(Transformed::no(plan));
    };
    let Some(node) = lateral_call(&join.right) else {
        return Ok(Transformed::no(plan));
    };
    let name = &node.call.call.name;
    let kind = match join.join_type {
        JoinType::Inner => LateralJoin::Inner,
        JoinType::Left => LateralJoin::Left,
        other => {
            return plan_err!(
                "a {other} join cannot take LATERAL TABLE({name}(...)); use a comma, JOIN or LEFT JOIN"
            );
        }
    };
    // The join condition, less a plain ON TRUE.
    let condition = conjunction(
        join.on
            .iter()
            .map(|(l, r)| l.clone().eq(r.clone()))
            .chain(join.filter.clone().filter(|f| !is_true(f))),
    );
    if kind == LateralJoin::Left && condition.is_some() {
        return plan_err!(
            "LEFT JOIN LATERAL TABLE({name}(...)) takes the condition ON TRUE; filter its columns in WHERE"
        );
    }

    let mut call = node.call.clone();
    call.call.args = call
        .call
        .args
        .into_iter()
        .map(|arg| {
            arg.transform(|e| match e {
                Expr::OuterReferenceColumn(_, column) => Ok(Transformed::yes(Expr::Column(column))),
                other => Ok(Transformed::no(other)),
            })
            .map(|t| t.data)
        })
        .collect::<Result<_>>()?;
    let left_width = join.left.schema().fields().len();
    let function_fields: Vec<_> = join
        .schema
        .iter()
        .skip(left_width)
        .map(|(qualifier, field)| (qualifier.cloned(), field.clone()))
        .collect();
    let own = call.fields(kind == LateralJoin::Left)?;
    let same_types = own.len() == function_fields.len()
        && own
            .iter()
            .zip(&function_fields)
            .all(|(a, (_, b))| a.data_type() == b.data_type());
    if !same_types {
        return plan_err!(
            "the columns of LATERAL TABLE({name}(...)) were changed on the way to the join; call it directly in FROM"
        );
    }
    let lateral = LateralNode::try_new(join.left.as_ref().clone(), call, kind, function_fields)?;
    let mut rewritten = LogicalPlan::Extension(Extension {
        node: Arc::new(lateral),
    });
    if let Some(condition) = condition {
        rewritten = LogicalPlan::Filter(Filter::try_new(condition, Arc::new(rewritten))?);
    }
    Ok(Transformed::yes(rewritten))
}
