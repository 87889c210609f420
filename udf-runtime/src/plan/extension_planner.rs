//! Physical planning of the framework's logical nodes.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, UserDefinedLogicalNode, cast};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{ExtensionPlanner, PhysicalPlanner};

use crate::ops::lateral::{LateralExec, LateralNode};
use crate::ops::over::{EventTimeOverExec, EventTimeOverNode};
use crate::ops::ptf::PtfNode;
use crate::ops::ptf::exec::PtfExec;
use crate::ops::ptf::input::PtfInput;
use crate::ops::table_aggregate::{TableAggregateExec, TableAggregateNode};
use crate::ops::updating_aggregate::{self, UpdatingAggregateExec, UpdatingAggregateNode};
use crate::ops::window::spec::WindowKind;
use crate::ops::window::{
    WindowAggregate, WindowAggregateExec, WindowAggregateNode, WindowTvfExec, WindowTvfNode,
};

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
            let mut inputs = Vec::with_capacity(physical_inputs.len());
            for (index, plan) in physical_inputs.iter().enumerate() {
                let schema = logical_inputs[index].schema();
                let physical = |exprs: &[Expr]| {
                    exprs
                        .iter()
                        .map(|e| planner.create_physical_expr(e, schema, session, planning_ctx))
                        .collect::<Result<Vec<_>>>()
                };
                let (keys, row) = match node.call.tables.get(index) {
                    Some(table) => {
                        // Co-partitioned tables meet on keys of one type each.
                        let keys: Vec<Expr> = if node.call.key_types.is_empty() {
                            table.keys.clone()
                        } else {
                            table
                                .keys
                                .iter()
                                .zip(&node.call.key_types)
                                .map(|(key, shared)| {
                                    if &key.get_type(schema)? == shared {
                                        Ok(key.clone())
                                    } else {
                                        Ok(cast(key.clone(), shared.clone()))
                                    }
                                })
                                .collect::<Result<_>>()?
                        };
                        (physical(&keys)?, physical(&table.row)?)
                    }
                    None => (Vec::new(), Vec::new()),
                };
                let kinds = match node.call.tables.get(index).and_then(|t| t.kinds.as_ref()) {
                    Some(kinds) => physical(std::slice::from_ref(kinds))?.pop(),
                    None => None,
                };
                inputs.push(PtfInput {
                    plan: plan.clone(),
                    keys,
                    row,
                    kinds,
                });
            }
            let schema = Arc::new(node.schema.as_arrow().clone());
            let processors = session.config().target_partitions();
            let exec = if crate::ballista::plans_for_a_cluster(session.config_options()) {
                PtfExec::on_cluster(inputs, node.call.clone(), schema, processors)
            } else {
                PtfExec::new(inputs, node.call.clone(), schema, processors)
            };
            return Ok(Some(Arc::new(exec)));
        }
        if let Some(node) = node.as_any().downcast_ref::<WindowTvfNode>() {
            if let WindowKind::Session { .. } = node.window {
                return plan_err!(
                    "SESSION windows are computed by a window aggregate (GROUP BY window_start, window_end, ...); the table function alone is not supported"
                );
            }
            return Ok(Some(Arc::new(WindowTvfExec::new(
                physical_inputs[0].clone(),
                node.window,
                node.time.column,
                Arc::new(node.schema.as_arrow().clone()),
            ))));
        }
        if let Some(node) = node.as_any().downcast_ref::<WindowAggregateNode>() {
            let calls = node
                .calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    let output = node.schema.field(node.layout.len() + index);
                    updating_aggregate::call(call, output, &physical, &physical_inputs[0].schema())
                })
                .collect::<Result<Vec<_>>>()?;
            let grouped = WindowAggregate {
                window: node.window,
                time: node.time.clone(),
                keys: physical(&node.keys)?,
                layout: node.layout.clone(),
                calls,
                schema: Arc::new(node.schema.as_arrow().clone()),
            };
            let partitions = session.config().target_partitions();
            return Ok(Some(Arc::new(
                if crate::ballista::plans_for_a_cluster(session.config_options()) {
                    WindowAggregateExec::on_cluster(physical_inputs[0].clone(), grouped, partitions)
                } else {
                    WindowAggregateExec::new(physical_inputs[0].clone(), grouped, partitions)
                },
            )));
        }
        if let Some(node) = node.as_any().downcast_ref::<EventTimeOverNode>() {
            let width = node.input.schema().fields().len();
            let calls = node
                .calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    let output = node.schema.field(width + index);
                    updating_aggregate::call(call, output, &physical, &physical_inputs[0].schema())
                })
                .collect::<Result<Vec<_>>>()?;
            return Ok(Some(Arc::new(EventTimeOverExec::new(
                physical_inputs[0].clone(),
                physical(&node.keys)?,
                node.time.clone(),
                node.frame,
                calls,
                Arc::new(node.schema.as_arrow().clone()),
                session.config().target_partitions(),
            ))));
        }
        if let Some(node) = node.as_any().downcast_ref::<UpdatingAggregateNode>() {
            let calls = node
                .calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    let output = node.schema.field(node.group_by.len() + index);
                    updating_aggregate::call(call, output, &physical, &physical_inputs[0].schema())
                })
                .collect::<Result<Vec<_>>>()?;
            return Ok(Some(Arc::new(UpdatingAggregateExec::new(
                physical_inputs[0].clone(),
                physical(&node.group_by)?,
                calls,
                Arc::new(node.schema.as_arrow().clone()),
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
