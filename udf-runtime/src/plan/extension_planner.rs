//! Physical planning of the framework's logical nodes.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::Result;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::{LogicalPlan, UserDefinedLogicalNode};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{ExtensionPlanner, PhysicalPlanner};

use crate::ops::lateral::{LateralExec, LateralNode};
use crate::ops::ptf::PtfNode;
use crate::ops::ptf::exec::PtfExec;
use crate::ops::table_aggregate::{TableAggregateExec, TableAggregateNode};

#[derive(Debug, Default)]
pub struct UdfExtensionPlanner;

#[async_trait]
impl ExtensionPlanner for UdfExtensionPlanner {
    async fn plan_extension(
        &self,
        planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        session: &dyn Session,
        planning_ctx: &PhysicalPlanningContext,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let input_schema = logical_inputs[0].schema();
        let physical = |exprs: &[datafusion::logical_expr::Expr]| {
            exprs
                .iter()
                .map(|e| planner.create_physical_expr(e, input_schema, session, planning_ctx))
                .collect::<Result<Vec<_>>>()
        };
        if let Some(node) = node.as_any().downcast_ref::<LateralNode>() {
            return Ok(Some(Arc::new(LateralExec::new(
                physical_inputs[0].clone(),
                physical(&node.call.call.args)?,
                node.call.clone(),
                node.join,
                Arc::new(node.schema.as_arrow().clone()),
            ))));
        }
        if let Some(node) = node.as_any().downcast_ref::<PtfNode>() {
            let (keys, row) = match &node.call.table {
                Some(table) => (physical(&table.keys)?, physical(&table.row)?),
                None => (Vec::new(), Vec::new()),
            };
            return Ok(Some(Arc::new(PtfExec::new(
                physical_inputs[0].clone(),
                node.call.clone(),
                keys,
                row,
                Arc::new(node.schema.as_arrow().clone()),
                session.config().target_partitions(),
            ))));
        }
        let Some(node) = node.as_any().downcast_ref::<TableAggregateNode>() else {
            return Ok(None);
        };
        Ok(Some(Arc::new(TableAggregateExec::new(
            physical_inputs[0].clone(),
            physical(&node.group_by)?,
            physical(&node.args)?,
            node.call.clone(),
            node.signature,
            node.row_type.clone(),
            node.row_is_struct(),
            Arc::new(node.schema.as_arrow().clone()),
        ))))
    }
}
