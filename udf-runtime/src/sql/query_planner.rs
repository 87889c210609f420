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
use datafusion::logical_expr::expr::ScalarFunction as ScalarFunctionExpr;
use datafusion::logical_expr::{Expr, LogicalPlan, ScalarUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};

use super::capabilities;
use super::extension_planner::UdfExtensionPlanner;
use super::scalar_udf::ScalarUdf;

#[derive(Debug, Default)]
pub struct UdfQueryPlanner;

#[async_trait]
impl QueryPlanner for UdfQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        capabilities::check_window_frames(logical_plan)?;
        let plan = with_query_instances(logical_plan.clone())?;
        DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(UdfExtensionPlanner)])
            .create_physical_plan(&plan, session_state)
            .await
    }
}

/// Replaces each call of a stateful function with a call of a fresh instance.
fn with_query_instances(plan: LogicalPlan) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|node| {
        node.map_expressions(|expr| {
            expr.transform_up(|expr| match &expr {
                Expr::ScalarFunction(call) => {
                    match (call.func.inner().as_ref() as &dyn Any).downcast_ref::<ScalarUdf>() {
                        Some(udf) if udf.has_lifecycle() => {
                            let fresh = Arc::new(ScalarUDF::new_from_impl(udf.for_query()));
                            Ok(Transformed::yes(Expr::ScalarFunction(
                                ScalarFunctionExpr::new_udf(fresh, call.args.clone()),
                            )))
                        }
                        _ => Ok(Transformed::no(expr)),
                    }
                }
                _ => Ok(Transformed::no(expr)),
            })
        })
    })
    .map(|t| t.data)
}
