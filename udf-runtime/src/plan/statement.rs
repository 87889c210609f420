//! Preparing a parsed statement for planning: calls of functions that yield rows must be in
//! FROM (`placement`); calls of our functions are bound by argument name (Flink's rules, with omitted optional arguments as NULL) and their
//! integer literals typed as Flink types them (INT when they fit, else BIGINT).

use std::ops::ControlFlow;

use datafusion::common::{DataFusionError, Result, plan_datafusion_err};
use datafusion::sql::parser::{CopyToSource, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::{
    self, CastKind, DataType as SqlDataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments,
    ObjectNamePart, UnaryOperator, Value, ValueWithSpan, visit_expressions_mut,
};

use crate::functions::arguments::{self, ArgName};
use crate::session::catalog::Catalog;

/// Rewrites every call of a registered function in `statement`.
pub fn prepare(statement: &mut DfStatement, catalog: &Catalog) -> Result<()> {
    match statement {
        DfStatement::Statement(inner) => rewrite(inner.as_mut(), catalog),
        DfStatement::Explain(explain) => prepare(&mut explain.statement, catalog),
        DfStatement::CopyTo(copy) => match &mut copy.source {
            CopyToSource::Query(query) => rewrite(query.as_mut(), catalog),
            CopyToSource::Relation(_) => Ok(()),
        },
        DfStatement::CreateExternalTable(_) | DfStatement::Reset(_) => Ok(()),
    }
}

fn rewrite<V: ast::VisitMut + ast::Visit>(node: &mut V, catalog: &Catalog) -> Result<()> {
    super::placement::check(node, catalog)?;
    let flow = visit_expressions_mut(node, |expr| match rewrite_call(expr, catalog) {
        Ok(()) => ControlFlow::Continue(()),
        Err(error) => ControlFlow::Break(error),
    });
    match flow {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(error) => Err(error),
    }
}

fn rewrite_call(expr: &mut Expr, catalog: &Catalog) -> Result<(), DataFusionError> {
    let Expr::Function(function) = expr else {
        return Ok(());
    };
    let [ObjectNamePart::Identifier(ident)] = function.name.0.as_slice() else {
        return Ok(());
    };
    let name = if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_lowercase()
    };
    let Some(entry) = catalog.get(&name) else {
        return Ok(());
    };
    let FunctionArguments::List(list) = &mut function.args else {
        return Ok(());
    };

    let mut bound = Vec::with_capacity(list.args.len());
    for arg in std::mem::take(&mut list.args) {
        let (name, value) = match arg {
            FunctionArg::Named { name, arg, .. } => (Some(ArgName::of(&name)), arg),
            FunctionArg::ExprNamed {
                name: Expr::Identifier(name),
                arg,
                ..
            } => (Some(ArgName::of(&name)), arg),
            FunctionArg::ExprNamed { name, .. } => {
                return Err(plan_datafusion_err!(
                    "`{name}` is not an argument name in the call of `{}`",
                    entry.name
                ));
            }
            FunctionArg::Unnamed(arg) => (None, arg),
        };
        bound.push((name, value));
    }
    let null = |_: &udf_core::ArgSpec| FunctionArgExpr::Expr(Expr::Value(Value::Null.into()));
    let ordered = arguments::bind(&entry.name, &entry.spec, bound, null)
        .map_err(|e| plan_datafusion_err!("{e}"))?;
    list.args = ordered
        .into_iter()
        .map(|arg| FunctionArg::Unnamed(type_integer_literal(arg)))
        .collect();
    Ok(())
}

/// `5` → `CAST(5 AS INT)`: an integer literal that fits INT is an INT, as in Flink (the
/// engine would otherwise type it BIGINT, and BIGINT does not narrow to an INT parameter).
fn type_integer_literal(arg: FunctionArgExpr) -> FunctionArgExpr {
    let FunctionArgExpr::Expr(expr) = arg else {
        return arg;
    };
    let number = match &expr {
        Expr::Value(ValueWithSpan {
            value: Value::Number(text, false),
            ..
        }) => text.parse::<i64>().ok(),
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr: inner,
        } => match inner.as_ref() {
            Expr::Value(ValueWithSpan {
                value: Value::Number(text, false),
                ..
            }) => text.parse::<i64>().ok().map(|n| -n),
            _ => None,
        },
        _ => None,
    };
    match number {
        Some(n) if i32::try_from(n).is_ok() => FunctionArgExpr::Expr(Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(expr),
            data_type: SqlDataType::Int(None),
            array: false,
            format: None,
        }),
        _ => FunctionArgExpr::Expr(expr),
    }
}
