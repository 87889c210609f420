//! A function as the engine sees it: one variant per kind, registered and called the same way.

use std::sync::Arc;

use datafusion::common::{Result, plan_err};
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::async_udf::AsyncScalarUDF;
use datafusion::logical_expr::expr::{
    AggregateFunction as AggregateCall, ScalarFunction as ScalarCall,
};
use datafusion::logical_expr::{AggregateUDF, Expr, ScalarUDF};
use datafusion::prelude::SessionContext;
use udf_core::{Function, FunctionKind, FunctionSpec, Metrics};

use super::aggregate::udf::AggregateUdf;
use super::async_scalar::AsyncScalarUdf;
use super::scalar::ScalarUdf;

pub enum EngineFunction {
    Scalar(Arc<ScalarUDF>),
    Aggregate(Arc<AggregateUDF>),
    /// Not an engine function: applied to tables through `flat_aggregate`.
    TableAggregate,
    /// Not an engine function: called in FROM (`LATERAL TABLE(f(..))`, `join_lateral`).
    Table,
    /// Not an engine function: called in FROM with table arguments (`f(TABLE t ...)`).
    Process,
}

impl EngineFunction {
    /// The engine's function for `function`, under `name`.
    pub fn new(
        name: &str,
        function: &Function,
        spec: Arc<FunctionSpec>,
        metrics: &Metrics,
    ) -> Result<Self> {
        match function {
            Function::Scalar(f) => {
                let udf = ScalarUdf::new(name, f.clone(), spec, metrics.clone());
                Ok(EngineFunction::Scalar(Arc::new(ScalarUDF::new_from_impl(
                    udf,
                ))))
            }
            Function::Aggregate(f) => {
                let udaf = AggregateUdf::new(name, f.clone(), spec);
                Ok(EngineFunction::Aggregate(Arc::new(
                    AggregateUDF::new_from_impl(udaf),
                )))
            }
            Function::AsyncScalar(f) => {
                let udf = AsyncScalarUdf::new(name, f.clone(), spec, metrics.clone());
                Ok(EngineFunction::Scalar(Arc::new(
                    AsyncScalarUDF::new(Arc::new(udf)).into_scalar_udf(),
                )))
            }
            Function::TableAggregate(_) => Ok(EngineFunction::TableAggregate),
            Function::Table(_) | Function::AsyncTable(_) => Ok(EngineFunction::Table),
            Function::Process(_) => Ok(EngineFunction::Process),
            other => plan_err!(
                "`{name}` is a {} function, which this runtime cannot run yet",
                other.spec().kind
            ),
        }
    }

    /// The registered function `name` of kind `kind`.
    pub fn registered(context: &SessionContext, name: &str, kind: FunctionKind) -> Result<Self> {
        match kind {
            FunctionKind::Aggregate => Ok(EngineFunction::Aggregate(context.udaf(name)?)),
            FunctionKind::TableAggregate => Ok(EngineFunction::TableAggregate),
            FunctionKind::Table | FunctionKind::AsyncTable => Ok(EngineFunction::Table),
            FunctionKind::ProcessTable => Ok(EngineFunction::Process),
            _ => Ok(EngineFunction::Scalar(context.udf(name)?)),
        }
    }

    pub fn register(&self, context: &SessionContext) {
        match self {
            EngineFunction::Scalar(udf) => context.register_udf(udf.as_ref().clone()),
            EngineFunction::Aggregate(udaf) => context.register_udaf(udaf.as_ref().clone()),
            EngineFunction::TableAggregate | EngineFunction::Table | EngineFunction::Process => {}
        }
    }

    pub fn deregister(context: &SessionContext, name: &str, kind: FunctionKind) {
        match kind {
            FunctionKind::Aggregate => context.deregister_udaf(name),
            FunctionKind::TableAggregate
            | FunctionKind::Table
            | FunctionKind::AsyncTable
            | FunctionKind::ProcessTable => {}
            _ => context.deregister_udf(name),
        }
    }

    /// A call expression (an aggregate call without DISTINCT, FILTER or ORDER BY).
    pub fn call(&self, name: &str, args: Vec<Expr>) -> Result<Expr> {
        match self {
            EngineFunction::Scalar(udf) => {
                Ok(Expr::ScalarFunction(ScalarCall::new_udf(udf.clone(), args)))
            }
            EngineFunction::Aggregate(udaf) => Ok(Expr::AggregateFunction(AggregateCall::new_udf(
                udaf.clone(),
                args,
                false,
                None,
                vec![],
                None,
            ))),
            EngineFunction::TableAggregate => plan_err!(
                "`{name}` is a table aggregate, which yields rows rather than a value: \
                 call it with `session.table_aggregate(..)` and `DataFrame::flat_aggregate`"
            ),
            EngineFunction::Table => plan_err!(
                "`{name}` is a table function, which yields rows rather than a value: \
                 call it with `session.table_function(..)` and `DataFrame::join_lateral`"
            ),
            EngineFunction::Process => plan_err!(
                "`{name}` is a process table function, which yields rows rather than a value: \
                 call it with `DataFrame::process`, or in SQL as `FROM {name}(TABLE t ...)`"
            ),
        }
    }
}
