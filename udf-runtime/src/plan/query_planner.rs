//! Physical planning with per-query function instances: a function with `open`/`close` gets
//! a fresh copy for every query, opened before its first call and closed when the query's
//! plan is dropped (Flink opens function instances per job, not per session).

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::Result;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::async_udf::AsyncScalarUDF;
use datafusion::logical_expr::expr::ScalarFunction as ScalarFunctionExpr;
use datafusion::logical_expr::{Expr, LogicalPlan, ScalarUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};
use udf_core::{Function, Metrics};

use super::extension_planner::UdfExtensionPlanner;
use crate::functions::aggregate::capabilities;
use crate::functions::async_scalar::AsyncScalarUdf;
use crate::functions::scalar::ScalarUdf;
use crate::session::catalog::Catalog;

#[derive(Debug)]
pub struct UdfQueryPlanner {
    /// Where async functions are found again (DataFusion's async wrapper hides ours).
    pub catalog: Arc<Catalog>,
    pub metrics: Metrics,
}

#[async_trait]
impl QueryPlanner for UdfQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        capabilities::check_window_frames(logical_plan)?;
        let plan = self.with_query_instances(logical_plan.clone())?;
        DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(UdfExtensionPlanner)])
            .create_physical_plan(&plan, session_state)
            .await
    }
}

impl UdfQueryPlanner {
    /// Replaces each call of a stateful function with a call of a fresh instance.
    fn with_query_instances(&self, plan: LogicalPlan) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            node.map_expressions(|expr| {
                expr.transform_up(|expr| match &expr {
                    Expr::ScalarFunction(call) => match self.fresh_instance(&call.func) {
                        Some(fresh) => Ok(Transformed::yes(Expr::ScalarFunction(
                            ScalarFunctionExpr::new_udf(Arc::new(fresh), call.args.clone()),
                        ))),
                        None => Ok(Transformed::no(expr)),
                    },
                    _ => Ok(Transformed::no(expr)),
                })
            })
        })
        .map(|t| t.data)
    }

    fn fresh_instance(&self, udf: &ScalarUDF) -> Option<ScalarUDF> {
        let inner = udf.inner().as_ref() as &dyn Any;
        if let Some(ours) = inner.downcast_ref::<ScalarUdf>() {
            return ours
                .has_lifecycle()
                .then(|| ScalarUDF::new_from_impl(ours.for_query()));
        }
        if inner.is::<AsyncScalarUDF>() {
            let entry = self.catalog.get(udf.name())?;
            let Function::AsyncScalar(function) = &entry.function else {
                return None;
            };
            function.instantiate()?;
            let fresh = AsyncScalarUdf::new(
                &entry.name,
                function.clone(),
                entry.spec.clone(),
                self.metrics.clone(),
            );
            return Some(AsyncScalarUDF::new(Arc::new(fresh)).into_scalar_udf());
        }
        None
    }
}
