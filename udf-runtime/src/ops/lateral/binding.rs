//! `TABLE(f(...))` and `LATERAL TABLE(f(...))` in FROM: a call of a registered table
//! function, planned as a standalone [`LateralNode`]. In a lateral position the arguments
//! may read the columns of the tables to the left (as outer references); the analyzer rule
//! then joins the node to them.

use std::sync::Arc;

use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::logical_expr::planner::{
    PlannedRelation, RelationPlanner, RelationPlannerContext, RelationPlanning,
};
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::sql::sqlparser::ast::{
    Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectNamePart, TableAlias,
    TableFactor,
};
use udf_core::Metrics;

use super::call::{TableFunctionCall, TableFunctionImpl};
use super::node::LateralNode;
use crate::session::catalog::Catalog;

#[derive(Debug)]
pub struct TableFunctionPlanner {
    pub catalog: Arc<Catalog>,
    pub metrics: Metrics,
}

/// The call inside `TABLE(...)`, with its alias.
pub(crate) fn table_call(relation: &TableFactor) -> Option<(&SqlExpr, &Option<TableAlias>)> {
    match relation {
        TableFactor::TableFunction { expr, alias } => Some((expr, alias)),
        TableFactor::Function {
            lateral: true,
            name,
            args,
            alias,
            ..
        } => {
            let [ObjectNamePart::Identifier(keyword)] = name.0.as_slice() else {
                return None;
            };
            if keyword.quote_style.is_some() || !keyword.value.eq_ignore_ascii_case("table") {
                return None;
            }
            match args.as_slice() {
                [FunctionArg::Unnamed(FunctionArgExpr::Expr(expr))] => Some((expr, alias)),
                _ => None,
            }
        }
        _ => None,
    }
}

impl RelationPlanner for TableFunctionPlanner {
    fn plan_relation(
        &self,
        relation: TableFactor,
        context: &mut dyn RelationPlannerContext,
    ) -> Result<RelationPlanning> {
        let Some((expr, alias)) = table_call(&relation) else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let SqlExpr::Function(function) = expr else {
            return plan_err!("TABLE(...) takes a call of a table function, not `{expr}`");
        };
        let [ObjectNamePart::Identifier(ident)] = function.name.0.as_slice() else {
            return plan_err!("no table function named `{}` is registered", function.name);
        };
        let name = context.normalize_ident(ident.clone());
        let Some(entry) = self.catalog.get(&name) else {
            return plan_err!("no table function named `{name}` is registered");
        };
        let Some(table_function) = TableFunctionImpl::of(&entry.function) else {
            return plan_err!(
                "`{}` is a {} function; TABLE(...) calls table functions",
                entry.name,
                entry.spec.kind
            );
        };
        let sql_args = match &function.args {
            FunctionArguments::None => vec![],
            FunctionArguments::List(list) => list.args.clone(),
            FunctionArguments::Subquery(_) => {
                return plan_err!("`{}` takes values, not a subquery", entry.name);
            }
        };
        // Arguments were bound by name and ordered before planning (`statement::prepare`);
        // columns of the tables to the left resolve as outer references.
        let args = sql_args
            .into_iter()
            .map(|arg| match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(expr)) => {
                    context.sql_to_expr(expr, &DFSchema::empty())
                }
                other => plan_err!("`{other}` is not an argument of `{}`", entry.name),
            })
            .collect::<Result<Vec<_>>>()?;
        let call = TableFunctionCall::new(
            entry.name.clone(),
            entry.spec.clone(),
            table_function,
            args,
            self.metrics.clone(),
        );
        let node = LateralNode::standalone(call)?;
        let plan = LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        });
        Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
            plan,
            alias.clone(),
        ))))
    }
}
