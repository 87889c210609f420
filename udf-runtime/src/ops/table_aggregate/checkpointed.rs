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
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use futures::StreamExt;
use futures::stream::BoxStream;

use super::aggregation::{EmitMode, TableAggregation};
use super::batches::{output_batch, push};
use crate::checkpoint::barrier::{Barrier, Flow};
use crate::checkpoint::coordinator::Coordinator;
use crate::ops::ptf::routed::Routed;
use crate::ops::ptf::router::{Inbox, Router, keys_of_processor};

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
    let batches = run_flow(parts, router, partition, context)?.filter_map(|flow| {
        std::future::ready(match flow {
            Ok(Flow::Rows(batch)) => Some(Ok(batch)),
            Ok(Flow::Barrier(_)) => None,
            Err(error) => Some(Err(error)),
        })
    });
    Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
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
    let Partition {
        mut aggregation,
        schema,
        group_by,
        args,
        row_is_struct,
        mode,
        name,
        partitions,
    } = parts;
    if let Some(coordinator) = &inbox.coordinator {
        restore(coordinator, &mut aggregation, &name, partition, partitions)?;
    }
    let reading = Reading {
        inbox: Some(inbox),
        aggregation,
        queued: VecDeque::new(),
    };
    let stream = futures::stream::try_unfold(reading, move |mut reading| {
        let (group_by, args, schema, name) =
            (group_by.clone(), args.clone(), schema.clone(), name.clone());
        async move {
            loop {
                if let Some(flow) = reading.queued.pop_front() {
                    return Ok(Some((flow, reading)));
                }
                let Some(messages) = reading.inbox.as_mut() else {
                    return Ok(None);
                };
                let aggregation = &mut reading.aggregation;
                match messages.next().await {
                    Some(Ok(Routed::Rows { batch, .. })) => {
                        if let Some(output) = push(aggregation, &group_by, &args, &batch)?
                            && !output.kinds.is_empty()
                        {
                            let batch = output_batch(&schema, output, row_is_struct, mode)?;
                            reading.queued.push_back(Flow::Rows(batch));
                        }
                    }
                    Some(Ok(Routed::Checkpoint { barrier, alignment })) => {
                        if barrier.stop {
                            // A savepoint that stops the query: no end of input.
                            reading.inbox = None;
                        }
                        save(aggregation, &name, partition, &barrier, alignment);
                        reading.queued.push_back(Flow::Barrier(barrier));
                    }
                    Some(Ok(Routed::End { .. })) => {}
                    Some(Ok(Routed::Barrier { .. })) => {
                        return internal_err!("a barrier passed the inbox's alignment");
                    }
                    Some(Err(error)) => return Err(error),
                    None => {
                        let coordinator = messages.coordinator.clone();
                        reading.inbox = None;
                        let output = aggregation.finish().map_err(DataFusionError::Execution)?;
                        let batch = output_batch(&schema, output, row_is_struct, mode)?;
                        reading.queued.push_back(Flow::Rows(batch));
                        // Everything is done: the final checkpoint, after the last rows.
                        if let Some(barrier) = coordinator.and_then(|c| c.final_barrier()) {
                            save(aggregation, &name, partition, &barrier, Default::default());
                            reading.queued.push_back(Flow::Barrier(barrier));
                        }
                    }
                }
            }
        }
    });
    Ok(stream.boxed())
}

struct Reading {
    /// `None` once the input ended or stopped.
    inbox: Option<Inbox>,
    aggregation: TableAggregation,
    /// What goes out next, in order.
    queued: VecDeque<Flow>,
}

/// Saves the partition's groups for `barrier`'s checkpoint.
fn save(
    aggregation: &mut TableAggregation,
    name: &str,
    partition: usize,
    barrier: &Barrier,
    alignment: std::time::Duration,
) {
    let background = !(barrier.end || barrier.stop);
    match aggregation.snapshot() {
        Ok(state) => barrier
            .pending
            .processor(partition, state, alignment, background),
        Err(error) => barrier.pending.fail(format!(
            "partition {partition} of `{name}` could not save its accumulators: {error}"
        )),
    }
}

/// The groups of the restored checkpoint that are this partition's: its own state when the
/// partition count is the same, else every saved partition's groups routed here.
fn restore(
    coordinator: &Coordinator,
    aggregation: &mut TableAggregation,
    name: &str,
    partition: usize,
    partitions: usize,
) -> Result<()> {
    let Some(restored) = coordinator.restored() else {
        return Ok(());
    };
    let saved = restored.manifest.processors.len();
    let restoring = if saved == partitions {
        match restored.state(partition) {
            Ok(state) => aggregation.restore(&state, None),
            Err(error) => Err(error.to_string()),
        }
    } else {
        let keep = keys_of_processor(partition, partitions);
        (0..saved).try_for_each(|index| {
            let state = restored.state(index).map_err(|e| e.to_string())?;
            aggregation.restore(&state, Some(&keep))
        })
    };
    restoring.map_err(|error| {
        DataFusionError::Execution(format!(
            "the state of `{name}` (uid `{}`) in checkpoint {} does not restore: {error}",
            coordinator.target().uid,
            restored.dir.display()
        ))
    })
}
