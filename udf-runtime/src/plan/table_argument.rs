//! A TABLE argument as the dialect encodes it (`__table_argument((SELECT ...)) OVER
//! (PARTITION BY .. ORDER BY ..)`, see `dialect.rs`), decoded for the binders of the calls
//! that take one.

use datafusion::sql::sqlparser::ast::{
    Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectNamePart, OrderByExpr,
    Query, WindowType,
};

use super::dialect::TABLE_ARGUMENT;

/// A table argument as parsed: the query, its PARTITION BY keys and ORDER BY columns.
pub struct TableArgument {
    pub query: Box<Query>,
    pub partition_by: Vec<SqlExpr>,
    pub order_by: Vec<OrderByExpr>,
}

/// The table argument `expr` encodes, if it is one.
pub fn table_argument(expr: &SqlExpr) -> Option<TableArgument> {
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

/// A call's arguments as written: each with its name (for `name => value`) and either a
/// table argument or a value expression.
pub fn call_arguments(
    function: &str,
    args: &[FunctionArg],
) -> datafusion::common::Result<Vec<(Option<crate::functions::arguments::ArgName>, Given)>> {
    use crate::functions::arguments::ArgName;
    args.iter()
        .map(|arg| {
            let (name, value) = match arg {
                FunctionArg::Named { name, arg, .. } => (Some(ArgName::of(name)), arg),
                FunctionArg::ExprNamed {
                    name: SqlExpr::Identifier(name),
                    arg,
                    ..
                } => (Some(ArgName::of(name)), arg),
                FunctionArg::ExprNamed { name, .. } => {
                    return datafusion::common::plan_err!(
                        "`{name}` is not an argument name in the call of `{function}`"
                    );
                }
                FunctionArg::Unnamed(arg) => (None, arg),
            };
            let FunctionArgExpr::Expr(value) = value else {
                return datafusion::common::plan_err!(
                    "`{function}` takes tables and values as arguments, not `{value}`"
                );
            };
            let given = match table_argument(value) {
                Some(table) => Given::Table(table),
                None => Given::Value(Box::new(value.clone())),
            };
            Ok((name, given))
        })
        .collect()
}

/// The columns `DESCRIPTOR(a, b, ...)` names (at least one), or `None` for anything else.
pub fn descriptor_columns(value: &SqlExpr) -> Option<Vec<String>> {
    let SqlExpr::Function(function) = value else {
        return None;
    };
    if !function.name.to_string().eq_ignore_ascii_case("descriptor") {
        return None;
    }
    let FunctionArguments::List(list) = &function.args else {
        return None;
    };
    if list.args.is_empty() {
        return None;
    }
    list.args
        .iter()
        .map(|arg| match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(SqlExpr::Identifier(ident))) => {
                Some(ident.value.clone())
            }
            _ => None,
        })
        .collect()
}

/// One argument as written, before binding.
pub enum Given {
    Table(TableArgument),
    Value(Box<SqlExpr>),
}
