//! The sink's input run so that barriers keep their place: the stateful operator's output
//! (a process table function's, another keyed operator's) with its barriers, through the projections and filters between them (evaluated
//! here, batch by batch, as those operators would).

use std::any::Any;
use std::sync::Arc;

use datafusion::common::{Result, plan_err};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use futures::StreamExt;
use futures::stream::BoxStream;

use crate::checkpoint::barrier::Flow;
use crate::checkpoint::keyed_execs::keyed_exec;
use crate::checkpoint::stateless::{is_per_batch, per_batch};
use crate::ops::ptf::exec::PtfExec;

/// Partition `partition` of `plan` with the barriers of its stateful operator.
pub fn flow(
    plan: &Arc<dyn ExecutionPlan>,
    partition: usize,
    context: Arc<TaskContext>,
) -> Result<BoxStream<'static, Result<Flow>>> {
    let any = plan.as_ref() as &dyn Any;
    if let Some(function) = any.downcast_ref::<PtfExec>() {
        return function.execute_flow(partition, context);
    }
    if let Some(keyed) = keyed_exec(plan.as_ref()) {
        return keyed.execute_flow(partition, context);
    }
    if let Some((input, apply)) = per_batch(plan.as_ref())? {
        let input = flow(input, partition, context)?;
        return Ok(input
            .map(move |flow| match flow? {
                Flow::Rows(batch) => Ok(Flow::Rows(apply(&batch)?)),
                barrier => Ok(barrier),
            })
            .boxed());
    }
    plan_err!(
        "`{}` between the stateful operator and the committing sink cannot pass checkpoint barriers in order with its rows",
        plan.name()
    )
}

/// Whether `plan` may stand between the stateful operator and the sink.
pub fn passes(plan: &dyn ExecutionPlan) -> bool {
    let any = plan as &dyn Any;
    any.is::<PtfExec>() || keyed_exec(plan).is_some() || is_per_batch(plan)
}
