//! Functions that yield rows are called in FROM, not where a value is expected: such a call
//! is reported with the form that works, instead of the engine's "invalid function".

use std::collections::HashSet;
use std::ops::ControlFlow;

use datafusion::common::{DataFusionError, Result, plan_datafusion_err};
use datafusion::sql::sqlparser::ast::{Expr, ObjectNamePart, TableFactor, Visit, Visitor};
use udf_core::FunctionKind;

use crate::ops::lateral::binding::table_call;
use crate::session::catalog::Catalog;

/// Checks every call of a registered function in `node`.
pub fn check<V: Visit>(node: &V, catalog: &Catalog) -> Result<()> {
    let mut placement = Placement {
        catalog,
        in_from: HashSet::new(),
    };
    match node.visit(&mut placement) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(error) => Err(error),
    }
}

struct Placement<'a> {
    catalog: &'a Catalog,
    /// The calls inside `TABLE(...)` in FROM, by address (the tree does not move while
    /// it is visited).
    in_from: HashSet<*const Expr>,
}

impl Visitor for Placement<'_> {
    type Break = DataFusionError;

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<Self::Break> {
        if let Some((call, _)) = table_call(factor) {
            self.in_from.insert(call as *const Expr);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<Self::Break> {
        let Expr::Function(function) = expr else {
            return ControlFlow::Continue(());
        };
        if self.in_from.contains(&(expr as *const Expr)) {
            return ControlFlow::Continue(());
        }
        let [ObjectNamePart::Identifier(ident)] = function.name.0.as_slice() else {
            return ControlFlow::Continue(());
        };
        let name = if ident.quote_style.is_some() {
            ident.value.clone()
        } else {
            ident.value.to_lowercase()
        };
        let Some(entry) = self.catalog.get(&name) else {
            return ControlFlow::Continue(());
        };
        let name = &entry.name;
        match entry.spec.kind {
            FunctionKind::Table | FunctionKind::AsyncTable => {
                ControlFlow::Break(plan_datafusion_err!(
                    "`{name}` is a table function, which yields rows rather than a value: call it in FROM, as `LATERAL TABLE({name}(...))` after the table it reads, or `TABLE({name}(...))`"
                ))
            }
            FunctionKind::ProcessTable => ControlFlow::Break(plan_datafusion_err!(
                "`{name}` is a process table function, which yields rows rather than a value: call it in FROM, as `{name}(input => TABLE t PARTITION BY k, ...)`"
            )),
            FunctionKind::TableAggregate => ControlFlow::Break(plan_datafusion_err!(
                "`{name}` is a table aggregate, which yields rows rather than a value: call it in FROM, as `{name}(TABLE t PARTITION BY k)`"
            )),
            _ => ControlFlow::Continue(()),
        }
    }
}
