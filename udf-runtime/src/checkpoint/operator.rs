//! A keyed operator that is not a process table function — a table aggregate's changelog,
//! an updating GROUP BY, a window aggregate — under checkpoints. DataFusion's repartitioning would hold rows
//! while a barrier passed it, so the plan's own is taken out (`rule.rs`) and the rows are
//! routed to the partitions by key with the process table functions' router: each
//! partition's inbox aligns the barriers of every source, and at each checkpoint the
//! partition saves its operator's state, which a restored run takes back (or, with another
//! partition count, the keys now routed to it of every saved partition's).

use std::collections::VecDeque;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{Result, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::ExecutionPlan;
use futures::StreamExt;
use futures::stream::BoxStream;

use super::barrier::{Barrier, Flow};
use super::coordinator::CheckpointTarget;
use crate::ops::routing::routed::Routed;
use crate::ops::routing::router::{Inbox, Router, restore_processor};
use crate::streaming::state::KeepKeys;

/// The exec of a keyed operator that checkpoints cover, beside process table functions
/// (which have their own): a table aggregate's changelog, an updating GROUP BY, a window
/// aggregate, each over unbounded input.
pub(crate) trait KeyedExec: ExecutionPlan {
    /// What checkpoints save its state as; an error when it cannot be checkpointed.
    fn checkpoint_target(&self) -> Result<CheckpointTarget>;

    /// The exec over `region`, its input without repartitioning (it routes rows by key
    /// itself, so barriers keep their place), saving its state at every checkpoint; its
    /// output read with the barriers (`execute_flow`) when a committing `sink` writes it.
    fn checkpointed(
        &self,
        region: Arc<dyn ExecutionPlan>,
        sink: bool,
    ) -> Result<Arc<dyn ExecutionPlan>>;

    /// Partition `partition`'s output with the barriers of its checkpoints, for the
    /// committing sink.
    fn execute_flow(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<BoxStream<'static, Result<Flow>>>;

    fn keyed_input(&self) -> &Arc<dyn ExecutionPlan>;
}

/// What one partition of a checkpointed keyed operator does.
pub(crate) trait KeyedOperator: Send + 'static {
    /// The operator's name, for errors.
    fn name(&self) -> &str;

    /// Folds in rows routed to this partition; the rows it emits.
    fn push(&mut self, rows: Rows<'_>) -> Result<Vec<RecordBatch>>;

    /// Input partition `source` ended (its watermark is +∞); the rows it emits.
    fn end_of(&mut self, _source: usize) -> Result<Vec<RecordBatch>> {
        Ok(Vec::new())
    }

    /// The end of input; the rows it emits.
    fn finish(&mut self) -> Result<Vec<RecordBatch>>;

    /// The partition's state, as bytes.
    fn snapshot(&mut self) -> Result<Vec<u8>>;

    /// Takes the state of `snapshot` (the keys `keep` says are this partition's, when
    /// given), beside any taken before.
    fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()>;
}

/// Rows of input partition `source` routed to one partition, as the router sends them.
pub(crate) struct Rows<'a> {
    pub source: usize,
    pub batch: &'a RecordBatch,
    /// With event time: each row's time (epoch ms), the source's watermark before each row,
    /// and its watermark after the batch.
    pub times: Option<&'a [i64]>,
    pub before: Option<&'a [Option<i64>]>,
    pub after: Option<i64>,
}

/// Partition `partition` of `partitions`: its rows, its state restored when the run restores.
pub(crate) fn run(
    operator: impl KeyedOperator,
    router: &Router,
    partition: usize,
    partitions: usize,
    schema: SchemaRef,
    context: Arc<TaskContext>,
) -> Result<SendableRecordBatchStream> {
    let flow = run_flow(operator, router, partition, partitions, context)?;
    Ok(Flow::rows_of(flow, schema))
}

/// Its rows with a barrier after the rows of each checkpoint the partition saved — and, at
/// the end of input, after the last rows and the final checkpoint — for a committing sink.
pub(crate) fn run_flow(
    mut operator: impl KeyedOperator,
    router: &Router,
    partition: usize,
    partitions: usize,
    context: Arc<TaskContext>,
) -> Result<BoxStream<'static, Result<Flow>>> {
    let inbox = router.inbox(partition, context)?;
    if let Some(coordinator) = &inbox.coordinator {
        let name = operator.name().to_owned();
        restore_processor(coordinator, &name, partition, partitions, |state, part| {
            operator.restore(state, part.map(|(_, keep)| keep))
        })?;
    }
    let reading = Reading {
        inbox: Some(inbox),
        queued: VecDeque::new(),
        operator,
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

struct Reading<O> {
    /// `None` once the input ended or stopped.
    inbox: Option<Inbox>,
    /// What goes out next, in order.
    queued: VecDeque<Flow>,
    operator: O,
    partition: usize,
}

impl<O: KeyedOperator> Reading<O> {
    /// Takes the inbox's next message, queueing what it gives (nothing once the input is over).
    async fn next_message(&mut self) -> Result<()> {
        let Some(messages) = self.inbox.as_mut() else {
            return Ok(());
        };
        match messages.next().await {
            Some(Ok(Routed::Rows {
                source,
                batch,
                times,
                before,
                after,
                ..
            })) => {
                let rows = Rows {
                    source,
                    batch: &batch,
                    times: times.as_deref(),
                    before: before.as_deref(),
                    after,
                };
                let emitted = self.operator.push(rows)?;
                self.queued.extend(emitted.into_iter().map(Flow::Rows));
            }
            Some(Ok(Routed::Checkpoint { barrier, alignment })) => {
                if barrier.stop {
                    // A savepoint that stops the query: no end of input.
                    self.inbox = None;
                }
                self.save(&barrier, alignment);
                self.queued.push_back(Flow::Barrier(barrier));
            }
            Some(Ok(Routed::End { source })) => {
                let emitted = self.operator.end_of(source)?;
                self.queued.extend(emitted.into_iter().map(Flow::Rows));
            }
            Some(Ok(Routed::Barrier { .. })) => {
                return internal_err!("a barrier passed the inbox's alignment");
            }
            Some(Err(error)) => return Err(error),
            None => {
                let coordinator = messages.coordinator.clone();
                self.inbox = None;
                let emitted = self.operator.finish()?;
                self.queued.extend(emitted.into_iter().map(Flow::Rows));
                // Everything is done: the final checkpoint, after the last rows.
                if let Some(barrier) = coordinator.and_then(|c| c.final_barrier()) {
                    self.save(&barrier, Default::default());
                    self.queued.push_back(Flow::Barrier(barrier));
                }
            }
        }
        Ok(())
    }

    /// Saves the partition's state for `barrier`'s checkpoint.
    fn save(&mut self, barrier: &Barrier, alignment: std::time::Duration) {
        match self.operator.snapshot() {
            Ok(state) => barrier.saved(self.partition, state, alignment),
            Err(error) => barrier.pending.fail(format!(
                "partition {} of `{}` could not save its state: {error}",
                self.partition,
                self.operator.name()
            )),
        }
    }
}

/// The target of an operator that SQL gives no place to name (a GROUP BY, a window
/// aggregate, an OVER window): its uid is `<kind>-<16 hex digits>` of what it computes, so
/// the same query gets the same uid in every run (EXPLAIN shows it).
pub(crate) fn derived_target(kind: &str, computes: String) -> CheckpointTarget {
    CheckpointTarget {
        uid: format!("{kind}-{:016x}", fnv1a(computes.as_bytes())),
        function: computes,
        sink: false,
    }
}

/// FNV-1a, 64 bits: a hash that stays the same across runs and builds (a uid must).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
