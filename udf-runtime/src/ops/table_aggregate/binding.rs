//! The SQL form of table aggregates (Flink has none): a call in FROM whose argument is a
//! table. The table's columns other than the PARTITION BY keys are the function's arguments,
//! in order; the result has the keys, then the emitted columns.
//!
//! ```sql
//! SELECT * FROM Top2(TABLE (SELECT myField, value FROM MyTable) PARTITION BY myField)
//! SELECT * FROM Top2(input => TABLE MyTable PARTITION BY myField, changelog => TRUE) AS t(k, v, r, op)
//! SELECT * FROM Top2(input => TABLE events PARTITION BY k, changelog => TRUE, uid => 'top2')
//! ```

use std::sync::Arc;

use datafusion::common::{Column, DFSchema, Result, ScalarValue, plan_datafusion_err, plan_err};
use datafusion::logical_expr::planner::RelationPlannerContext;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan};
use datafusion::sql::sqlparser::ast::{Expr as SqlExpr, FunctionArg, TableFactor};
use udf_core::types::DataType;
use udf_core::{ArgSpec, ArgType, FunctionSpec, Semantics, TableAggregateFunction, TableArg};

use super::aggregation::EmitMode;
use super::node::{TableAggregateCall, TableAggregateNode};
use crate::functions::arguments;
use crate::ops::ptf::binding::valid_uid;
use crate::plan::table_argument::{Given, call_arguments};

/// The plan of a SQL call of table aggregate `name`.
pub fn plan(
    name: &str,
    spec: &Arc<FunctionSpec>,
    function: &Arc<dyn TableAggregateFunction>,
    args: &[FunctionArg],
    context: &mut dyn RelationPlannerContext,
) -> Result<LogicalPlan> {
    // What the SQL form takes: one table, and whether to return a changelog.
    let input = ArgSpec::new(
        "input",
        ArgType::Table(TableArg {
            semantics: Semantics::Set,
            row: None,
            optional_partition_by: true,
            pass_columns_through: false,
            require_on_time: false,
            supports_updates: false,
        }),
    );
    let changelog_arg =
        ArgSpec::new("changelog", ArgType::Typed(DataType::boolean())).optional(true);
    let uid_arg = ArgSpec::new("uid", ArgType::Typed(DataType::string())).optional(true);
    let bound = arguments::match_names(
        name,
        [&input, &changelog_arg, &uid_arg],
        &[],
        call_arguments(name, args)?,
    )
    .map_err(|e| plan_datafusion_err!("{e}"))?;
    let mut params = bound.params.into_iter();
    let table = match params.next().flatten() {
        Some(Given::Table(table)) => table,
        Some(Given::Value(_)) => {
            return plan_err!(
                "`{name}` takes one TABLE argument (`TABLE t PARTITION BY k`); its columns other than the keys are the function's arguments"
            );
        }
        None => {
            return plan_err!("`{name}` needs a TABLE argument: `{name}(TABLE t PARTITION BY k)`");
        }
    };
    let changelog = match params.next().flatten() {
        None => false,
        Some(Given::Value(value)) => boolean(context, *value, name)?,
        Some(Given::Table(_)) => {
            return plan_err!("`changelog` of `{name}` must be TRUE or FALSE, not a table");
        }
    };
    let uid = match params.next().flatten() {
        None => None,
        Some(Given::Value(value)) => Some(uid(context, *value, name)?),
        Some(Given::Table(_)) => return plan_err!("`uid` of `{name}` is a string, not a table"),
    };
    if !table.order_by.is_empty() {
        return plan_err!("`{name}` is a table aggregate: its TABLE argument takes no ORDER BY");
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
        name: name.to_owned(),
        spec: spec.clone(),
        function: function.clone(),
        args: arguments,
        names: None,
        mode: if changelog {
            EmitMode::Changelog
        } else {
            EmitMode::Final
        },
        uid,
    };
    let node = TableAggregateNode::try_new(input, group_by, call)?;
    Ok(LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    }))
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

/// `uid => 'name'`, in Flink's format for state identifiers.
fn uid(context: &mut dyn RelationPlannerContext, value: SqlExpr, function: &str) -> Result<String> {
    match context.sql_to_expr(value, &DFSchema::empty())? {
        Expr::Literal(ScalarValue::Utf8(Some(uid)), _) if valid_uid(&uid) => Ok(uid),
        other => Err(plan_datafusion_err!(
            "`uid` of `{function}` must be a string of letters, digits, `-` and `_` that does not start with a digit, not `{other}`"
        )),
    }
}
