//! The plan between a checkpointed source and the stateful operator that reads it, run so
//! that barriers keep their place among the rows. DataFusion's operators hold rows inside
//! (a filter coalesces small batches), so a barrier sent beside them could overtake rows;
//! instead the operator reads its input through this module, which runs the few operators
//! such a region may hold — projections and filters, evaluated here batch by batch as the
//! operators would — over the source's messages. Any other operator there is refused when
//! the plan is made (`rule.rs`).

use std::any::Any;
use std::sync::Arc;

use datafusion::common::{Result, plan_err};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use futures::StreamExt;

use super::barrier::SourceMessage;
use super::coordinator::Coordinator;
use super::file_source::{self, FileCursor};
use super::source::{self, Messages};
use super::stateless::{is_per_batch, per_batch};
use crate::session::feed::FeedExec;

/// Whether `plan` may stand between a source and the stateful operator: `None` if so, else
/// why not.
pub fn refusal(plan: &dyn ExecutionPlan) -> Option<String> {
    if (plan as &dyn Any).is::<FeedExec>() || is_per_batch(plan) {
        return None;
    }
    if let Some(files) = file_source::file_scan(plan) {
        return file_source::refusal(files);
    }
    if plan.children().is_empty() {
        return Some(format!(
            "the source `{}` cannot record a position for checkpoints (fed tables and files can)",
            plan.name()
        ));
    }
    Some(format!(
        "`{}` cannot pass checkpoint barriers in order with its rows (projections and filters can)",
        plan.name()
    ))
}

/// Partition `partition` of `plan` as messages with barriers; `source` numbers it among the
/// run's sources.
pub fn messages(
    plan: &Arc<dyn ExecutionPlan>,
    partition: usize,
    context: Arc<TaskContext>,
    coordinator: &Arc<Coordinator>,
    source: usize,
) -> Result<Messages> {
    let any = plan.as_ref() as &dyn Any;
    if let Some(feed) = any.downcast_ref::<FeedExec>() {
        coordinator.on_complete(feed.durable_hook());
        let batches = feed.execute(partition, context)?;
        return Ok(source::checkpointed(
            batches,
            feed.table().to_owned(),
            partition,
            source,
            coordinator.clone(),
            None,
        ));
    }
    if let Some(files) = file_source::file_scan(plan.as_ref()) {
        let restored = coordinator
            .restored()
            .and_then(|r| r.manifest.sources.get(source))
            .and_then(|s| s.file.as_ref());
        let cursor = FileCursor::default();
        let batches = file_source::batches(
            files,
            plan.schema(),
            partition,
            context,
            restored,
            cursor.clone(),
        )?;
        return Ok(source::checkpointed(
            batches,
            file_source::label(files),
            partition,
            source,
            coordinator.clone(),
            Some(cursor),
        ));
    }
    if let Some((input, apply)) = per_batch(plan.as_ref())? {
        let input = messages(input, partition, context, coordinator, source)?;
        return Ok(input
            .map(move |message| match message? {
                SourceMessage::Rows(batch) => Ok(SourceMessage::Rows(apply(&batch)?)),
                barrier => Ok(barrier),
            })
            .boxed());
    }
    match refusal(plan.as_ref()) {
        Some(reason) => plan_err!("{reason}"),
        None => plan_err!("`{}` cannot take part in checkpoints", plan.name()),
    }
}
