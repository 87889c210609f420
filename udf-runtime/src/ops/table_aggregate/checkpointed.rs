//! A table aggregate's changelog over unbounded input with checkpoints on. DataFusion's
//! repartitioning would hold rows while a barrier passed it, so the plan's own is taken out
//! (`checkpoint/rule.rs`) and the rows are routed to the partitions by their group keys here,
//! with the process table functions' router: each partition's inbox aligns the barriers of
//! every source, and at each checkpoint the partition saves its groups' accumulators.

use std::collections::VecDeque;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use futures::StreamExt;
use futures::stream::BoxStream;

use super::aggregation::{EmitMode, Output, TableAggregation};
use super::batches::{output_batch, push};
use crate::checkpoint::barrier::{Barrier, Flow};
use crate::ops::ptf::routed::Routed;
use crate::ops::ptf::router::{Inbox, Router, restore_processor};

/// What one partition of the exec runs with.
pub(super) struct Partition {
    pub aggregation: TableAggregation,
    pub schema: SchemaRef,
    pub group_by: Vec<Arc<dyn PhysicalExpr>>,
    pub args: Vec<Arc<dyn PhysicalExpr>>,
    pub row_is_struct: bool,
    pub mode: EmitMode,
    /// The function's name, for errors.
    pub name: String,
    /// The exec's partition count.
    pub partitions: usize,
}

/// Partition `partition`'s changelog, its groups restored when the run restores.
pub(super) fn run(
    parts: Partition,
    router: &Router,
    partition: usize,
    context: Arc<TaskContext>,
) -> Result<SendableRecordBatchStream> {
    let schema = parts.schema.clone();
    Ok(Flow::rows_of(
        run_flow(parts, router, partition, context)?,
        schema,
    ))
}

/// The changelog with a barrier after the rows of each checkpoint the partition saved — and,
/// at the end of input, after the last rows and the final checkpoint — for a committing sink.
pub(super) fn run_flow(
    parts: Partition,
    router: &Router,
    partition: usize,
    context: Arc<TaskContext>,
) -> Result<BoxStream<'static, Result<Flow>>> {
    let inbox = router.inbox(partition, context)?;
    let mut parts = parts;
    if let Some(coordinator) = &inbox.coordinator {
        // Its own groups, or (another partition count) those routed to it from every saved
        // partition's.
        let aggregation = &mut parts.aggregation;
        restore_processor(
            coordinator,
            &parts.name,
            partition,
            parts.partitions,
            |state, part| {
                aggregation
                    .restore(state, part.map(|(_, keep)| keep))
                    .map_err(DataFusionError::Execution)
            },
        )?;
    }
    let reading = Reading {
        inbox: Some(inbox),
        queued: VecDeque::new(),
        parts,
        partition,
    };
    let stream = futures::stream::try_unfold(reading, |mut reading| async move {
        loop {
            if let Some(flow) = reading.queued.pop_front() {
                return Ok(Some((flow, reading)));
            }
            reading.next_message().await?;
            if reading.inbox.is_none() && reading.queued.is_empty() {
                return Ok(None);
            }
        }
    });
    Ok(stream.boxed())
}

struct Reading {
    /// `None` once the input ended or stopped.
    inbox: Option<Inbox>,
    /// What goes out next, in order.
    queued: VecDeque<Flow>,
    parts: Partition,
    partition: usize,
}

impl Reading {
    /// Takes the inbox's next message, queueing what it gives (nothing once the input is over).
    async fn next_message(&mut self) -> Result<()> {
        let Some(messages) = self.inbox.as_mut() else {
            return Ok(());
        };
        match messages.next().await {
            Some(Ok(Routed::Rows { batch, .. })) => {
                if let Some(output) = push(
                    &mut self.parts.aggregation,
                    &self.parts.group_by,
                    &self.parts.args,
                    &batch,
                )? && !output.kinds.is_empty()
                {
                    self.queue_rows(output)?;
                }
            }
            Some(Ok(Routed::Checkpoint { barrier, alignment })) => {
                if barrier.stop {
                    // A savepoint that stops the query: no end of input.
                    self.inbox = None;
                }
                self.save(&barrier, alignment);
                self.queued.push_back(Flow::Barrier(barrier));
            }
            Some(Ok(Routed::End { .. })) => {}
            Some(Ok(Routed::Barrier { .. })) => {
                return internal_err!("a barrier passed the inbox's alignment");
            }
            Some(Err(error)) => return Err(error),
            None => {
                let coordinator = messages.coordinator.clone();
                self.inbox = None;
                let output = self
                    .parts
                    .aggregation
                    .finish()
                    .map_err(DataFusionError::Execution)?;
                self.queue_rows(output)?;
                // Everything is done: the final checkpoint, after the last rows.
                if let Some(barrier) = coordinator.and_then(|c| c.final_barrier()) {
                    self.save(&barrier, Default::default());
                    self.queued.push_back(Flow::Barrier(barrier));
                }
            }
        }
        Ok(())
    }

    fn queue_rows(&mut self, output: Output) -> Result<()> {
        let batch = output_batch(
            &self.parts.schema,
            output,
            self.parts.row_is_struct,
            self.parts.mode,
        )?;
        self.queued.push_back(Flow::Rows(batch));
        Ok(())
    }

    /// Saves the partition's groups for `barrier`'s checkpoint.
    fn save(&mut self, barrier: &Barrier, alignment: std::time::Duration) {
        match self.parts.aggregation.snapshot() {
            Ok(state) => barrier.saved(self.partition, state, alignment),
            Err(error) => barrier.pending.fail(format!(
                "partition {} of `{}` could not save its accumulators: {error}",
                self.partition, self.parts.name
            )),
        }
    }
}
