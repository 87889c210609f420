//! Calls in FROM whose argument is a table with `PARTITION BY`: the SQL form of table
//! aggregates (Flink has none). The table's columns other than the partition keys are the
//! function's arguments, in order; the result has the keys, then the emitted columns.
//!
//! ```sql
//! SELECT * FROM Top2(TABLE (SELECT myField, value FROM MyTable) PARTITION BY myField)
//! SELECT * FROM Top2(input => TABLE MyTable PARTITION BY myField, changelog => TRUE) AS t(k, v, r, op)
//! ```

use std::sync::Arc;

use datafusion::common::{Column, DFSchema, Result, ScalarValue, plan_datafusion_err, plan_err};
use datafusion::logical_expr::planner::{
    PlannedRelation, RelationPlanner, RelationPlannerContext, RelationPlanning,
};
use datafusion::logical_expr::{Expr, Extension, LogicalPlan};
use datafusion::sql::sqlparser::ast::{
    Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectNamePart, TableFactor,
    WindowType,
};
use udf_core::Function;

use super::dialect::TABLE_ARGUMENT;
use super::table_aggregate::{TableAggregateCall, TableAggregateNode};
use crate::catalog::Catalog;
use crate::table_aggregate::EmitMode;

#[derive(Debug)]
pub struct SetSemanticsPlanner {
    pub catalog: Arc<Catalog>,
    pub metrics: udf_core::Metrics,
    pub watermarks: Arc<crate::ptf::time::Watermarks>,
}

/// A table argument as parsed: the query and its PARTITION BY keys.
pub(crate) struct TableArgument {
    pub(crate) query: Box<datafusion::sql::sqlparser::ast::Query>,
    pub(crate) partition_by: Vec<SqlExpr>,
    pub(crate) order_by: Vec<datafusion::sql::sqlparser::ast::OrderByExpr>,
}

pub(crate) fn table_argument(expr: &SqlExpr) -> Option<TableArgument> {
    let SqlExpr::Function(function) = expr else {
        return None;
    };
    let [ObjectNamePart::Identifier(name)] = function.name.0.as_slice() else {
        return None;
    };
    if name.value != TABLE_ARGUMENT {
        return None;
    }
    let FunctionArguments::List(list) = &function.args else {
        return None;
    };
    let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(SqlExpr::Subquery(query)))) =
        list.args.first()
    else {
        return None;
    };
    let (partition_by, order_by) = match &function.over {
        Some(WindowType::WindowSpec(spec)) => (spec.partition_by.clone(), spec.order_by.clone()),
        _ => (vec![], vec![]),
    };
    Some(TableArgument {
        query: query.clone(),
        partition_by,
        order_by,
    })
}

impl RelationPlanner for SetSemanticsPlanner {
    fn plan_relation(
        &self,
        relation: TableFactor,
        context: &mut dyn RelationPlannerContext,
    ) -> Result<RelationPlanning> {
        let TableFactor::Table {
            name,
            args: Some(args),
            alias,
            ..
        } = &relation
        else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let [ObjectNamePart::Identifier(ident)] = name.0.as_slice() else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let Some(entry) = self.catalog.get(&context.normalize_ident(ident.clone())) else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let function = match &entry.function {
            Function::TableAggregate(function) => function,
            Function::Process(function) => {
                let call = crate::ptf::planner::PtfArguments {
                    name: &entry.name,
                    spec: &entry.spec,
                    function,
                    watermarks: &self.watermarks,
                    metrics: &self.metrics,
                };
                let plan = call.plan(&args.args, context)?;
                return Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
                    plan,
                    alias.clone(),
                ))));
            }
            _ => {
                return plan_err!(
                    "`{}` is a {} function; only table aggregates and process table functions are called with a TABLE argument in FROM",
                    entry.name,
                    entry.spec.kind
                );
            }
        };

        let mut table = None;
        let mut changelog = false;
        for arg in &args.args {
            let (arg_name, value) = match arg {
                FunctionArg::Named { name, arg, .. } => (Some(name.value.to_lowercase()), arg),
                FunctionArg::ExprNamed {
                    name: SqlExpr::Identifier(name),
                    arg,
                    ..
                } => (Some(name.value.to_lowercase()), arg),
                FunctionArg::Unnamed(arg) => (None, arg),
                FunctionArg::ExprNamed { name, .. } => {
                    return plan_err!("`{name}` is not an argument name");
                }
            };
            let FunctionArgExpr::Expr(value) = value else {
                return plan_err!(
                    "`{}` takes a TABLE argument and `changelog => TRUE|FALSE`",
                    entry.name
                );
            };
            match (arg_name.as_deref(), table_argument(value)) {
                (None | Some("input"), Some(argument)) if table.is_none() => table = Some(argument),
                (Some("changelog"), None) => {
                    changelog = boolean(context, value.clone(), &entry.name)?
                }
                (Some(other), _) if other != "input" => {
                    return plan_err!(
                        "`{}` has no argument named `{other}`; it takes `input => TABLE ...` and `changelog => TRUE|FALSE`",
                        entry.name
                    );
                }
                _ => {
                    return plan_err!(
                        "`{}` takes one TABLE argument (`TABLE t PARTITION BY k`); its columns other than the keys are the function's arguments",
                        entry.name
                    );
                }
            }
        }
        let Some(table) = table else {
            return plan_err!(
                "`{}` needs a TABLE argument: `{}(TABLE t PARTITION BY k)`",
                entry.name,
                entry.name
            );
        };
        if !table.order_by.is_empty() {
            return plan_err!(
                "`{}` is a table aggregate: its TABLE argument takes no ORDER BY",
                entry.name
            );
        }

        let input = context.plan(TableFactor::Derived {
            lateral: false,
            subquery: table.query,
            alias: None,
            sample: None,
        })?;
        let input_schema = input.schema().clone();
        let group_by = table
            .partition_by
            .into_iter()
            .map(|expr| context.sql_to_expr(expr, &input_schema))
            .collect::<Result<Vec<_>>>()?;
        let keys: Vec<&Column> = group_by
            .iter()
            .filter_map(|e| match e {
                Expr::Column(c) => Some(c),
                _ => None,
            })
            .collect();
        let arguments: Vec<Expr> = input_schema
            .columns()
            .into_iter()
            .filter(|c| {
                !keys
                    .iter()
                    .any(|k| k.name == c.name && (k.relation.is_none() || k.relation == c.relation))
            })
            .map(Expr::Column)
            .collect();
        let call = TableAggregateCall {
            name: entry.name.clone(),
            spec: entry.spec.clone(),
            function: function.clone(),
            args: arguments,
            names: None,
            mode: if changelog {
                EmitMode::Changelog
            } else {
                EmitMode::Final
            },
        };
        let node = TableAggregateNode::try_new(input, group_by, call)?;
        let plan = LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        });
        Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
            plan,
            alias.clone(),
        ))))
    }
}

fn boolean(
    context: &mut dyn RelationPlannerContext,
    value: SqlExpr,
    function: &str,
) -> Result<bool> {
    match context.sql_to_expr(value, &DFSchema::empty())? {
        Expr::Literal(ScalarValue::Boolean(Some(b)), _) => Ok(b),
        other => Err(plan_datafusion_err!(
            "`changelog` of `{function}` must be TRUE or FALSE, not `{other}`"
        )),
    }
}
