//! The keyed operators besides process table functions that checkpoints cover, found in a
//! plan: over unbounded input, a table aggregate's changelog, an updating GROUP BY, a window
//! aggregate and a row-time OVER window (over bounded input each runs as a batch job,
//! unchecked).

use std::any::Any;

use datafusion::physical_plan::execution_plan::Boundedness;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};

use super::operator::KeyedExec;
use crate::ops::over::EventTimeOverExec;
use crate::ops::table_aggregate::exec::TableAggregateExec;
use crate::ops::updating_aggregate::UpdatingAggregateExec;
use crate::ops::window::WindowAggregateExec;

/// `plan` as a keyed operator that checkpoints cover, when it is one.
pub(crate) fn keyed_exec(plan: &dyn ExecutionPlan) -> Option<&dyn KeyedExec> {
    if matches!(plan.boundedness(), Boundedness::Bounded) {
        return None;
    }
    let any = plan as &dyn Any;
    if let Some(exec) = any.downcast_ref::<TableAggregateExec>() {
        return Some(exec);
    }
    if let Some(exec) = any.downcast_ref::<UpdatingAggregateExec>() {
        return Some(exec);
    }
    if let Some(exec) = any.downcast_ref::<WindowAggregateExec>() {
        return Some(exec);
    }
    any.downcast_ref::<EventTimeOverExec>()
        .map(|exec| exec as &dyn KeyedExec)
}
