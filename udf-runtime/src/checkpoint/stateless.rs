//! The operators that may stand in a checkpointed region — projections and filters without a
//! row limit — as what they do to one batch, so the region can run them itself with barriers
//! among the batches (`region.rs` before the function, `ops/sink/input.rs` after it).

use std::any::Any;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::common::Result;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::filter::{FilterExec, batch_filter};
use datafusion::physical_plan::projection::ProjectionExec;

/// What an operator does to one batch.
pub type BatchFn = Arc<dyn Fn(&RecordBatch) -> Result<RecordBatch> + Send + Sync>;

/// `plan`'s input and what it does to each batch, when it keeps nothing across batches.
pub fn per_batch(plan: &dyn ExecutionPlan) -> Result<Option<(&Arc<dyn ExecutionPlan>, BatchFn)>> {
    let any = plan as &dyn Any;
    if let Some(projection) = any.downcast_ref::<ProjectionExec>() {
        let projector = projection
            .projection_expr()
            .make_projector(&projection.input().schema())?;
        let apply: BatchFn = Arc::new(move |batch| projector.project_batch(batch));
        return Ok(Some((projection.input(), apply)));
    }
    if let Some(filter) = any.downcast_ref::<FilterExec>()
        && filter.fetch().is_none()
    {
        let predicate = filter.predicate().clone();
        let columns = filter.projection().clone();
        let apply: BatchFn = Arc::new(move |batch| {
            let kept = batch_filter(batch, &predicate)?;
            Ok(match &columns {
                Some(columns) => kept.project(columns)?,
                None => kept,
            })
        });
        return Ok(Some((filter.input(), apply)));
    }
    Ok(None)
}

/// Whether `plan` is one [`per_batch`] runs.
pub fn is_per_batch(plan: &dyn ExecutionPlan) -> bool {
    let any = plan as &dyn Any;
    any.is::<ProjectionExec>()
        || any
            .downcast_ref::<FilterExec>()
            .is_some_and(|f| f.fetch().is_none())
}
