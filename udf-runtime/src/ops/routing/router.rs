//! Routing from the input partitions to the virtual processors, done by the PTF exec itself
//! (DataFusion's repartitioning carries no watermarks, docs/architecture.md, "Routing").
//!
//! One task per input partition hashes each batch's PARTITION BY keys and sends every
//! processor its rows, with the watermark of that input partition in force before each row
//! and after the batch. A processor that gets no rows of a batch still hears of a watermark
//! that advanced; the end of an input partition is its watermark +∞. Queues are kept short
//! by the gate (gate.rs). A processor fed by one input partition only (row semantics, or one
//! partition and one processor) routes it where it reads it, without a task or a queue.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{ArrayRef, RecordBatch, UInt32Array};
use datafusion::arrow::buffer::ScalarBuffer;
use datafusion::arrow::compute::take_record_batch;
use datafusion::common::hash_utils::{RandomState, create_hashes};
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{DataFusionError, Result, exec_err};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use futures::StreamExt;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::align::Aligner;
use super::gate::Gate;
use super::routed::Routed;
use super::shuffle::{Unstamp, routes};
use super::source_watermark::{BatchTimes, SourceWatermark};
use crate::checkpoint::barrier::{Barrier, SourceMessage};
use crate::checkpoint::config::CheckpointConfig;
use crate::checkpoint::coordinator::{CheckpointTarget, Coordinator};
use crate::checkpoint::jobs::Jobs;
use crate::checkpoint::manifest::SourcePosition;
use crate::checkpoint::region;
use crate::checkpoint::source::Messages;
use crate::session::clock::SessionClock;
use crate::streaming::event_time::EventTime;
use crate::streaming::state::KeepKeys;
use udf_core::ptf::ProcessingClock;

/// Messages a processor may have waiting before senders slow down (see `gate.rs`).
const QUEUED_MESSAGES: usize = 4;

/// Fixed, so a key goes to the same processor in every run.
const ROUTING_STATE: RandomState = RandomState::with_seed(0x5eed);

/// One input of the router: a table argument's plan, its PARTITION BY keys and time column.
#[derive(Debug, Clone)]
pub struct RouterInput {
    pub plan: Arc<dyn ExecutionPlan>,
    pub keys: Vec<Arc<dyn PhysicalExpr>>,
    pub event_time: Option<EventTime>,
    /// Stamped before a cluster's shuffle, the rows of several source partitions mixed.
    pub stamped: Option<Stamped>,
}

/// An input stamped before a cluster's shuffle (`shuffle/`).
#[derive(Debug, Clone)]
pub struct Stamped {
    /// The source partitions before the shuffle.
    pub sources: usize,
    /// The function, for errors.
    pub function: String,
}

impl RouterInput {
    /// The sources a processor hears of from this input: the partitions stamped before a
    /// shuffle, or the one partition it reads.
    fn sources_per_processor(&self) -> usize {
        self.stamped.as_ref().map_or(1, |s| s.sources)
    }
}

/// Routes the inputs to `processors` processors by a hash of their keys (all to processor 0
/// without keys), or — `as_is` — each partition of the one input to the processor of the
/// same number. Sources are numbered across the inputs: the first input's partitions, then
/// the second's, ...
pub struct Router {
    inputs: Vec<RouterInput>,
    processors: usize,
    as_is: bool,
    /// The operator checkpoints save, when they are on.
    checkpoint: Option<CheckpointTarget>,
    /// The channels of the current run, taken one by one by the processors.
    run: Mutex<Option<Run>>,
}

struct Run {
    receivers: Vec<Option<UnboundedReceiver<Result<Routed>>>>,
    gate: Arc<Gate>,
    tasks: Arc<Vec<SpawnedTask<()>>>,
    coordinator: Option<Arc<Coordinator>>,
}

/// A processor's end of the routing.
pub struct Inbox {
    source: Source,
    /// Input partitions feeding this processor, per input.
    pub sources: Vec<usize>,
    /// Holds back what a source sends after a barrier until every source's has come.
    aligner: Aligner,
    /// The run's checkpoint coordinator, when checkpoints are on.
    pub coordinator: Option<Arc<Coordinator>>,
}

enum Source {
    /// Messages from routing tasks, and the tasks (stopped when every processor has dropped
    /// its end).
    Channel {
        messages: UnboundedReceiver<Result<Routed>>,
        /// The queue this inbox reads, in the gate.
        queue: usize,
        gate: Arc<Gate>,
        _tasks: Arc<Vec<SpawnedTask<()>>>,
    },
    /// The processor's only input partition, routed where it is read (no task, no queue).
    Direct {
        stream: Option<Messages>,
        routing: Box<SourceRouting>,
        pending: VecDeque<Routed>,
    },
}

impl Inbox {
    /// The next message; `None` once every source has ended (or stopped at a savepoint).
    pub async fn next(&mut self) -> Option<Result<Routed>> {
        loop {
            if let Some(message) = self.aligner.released() {
                return Some(Ok(message));
            }
            let message = match self.receive().await? {
                Ok(message) => message,
                Err(error) => return Some(Err(error)),
            };
            if let Some(message) = self.aligner.offer(message) {
                return Some(Ok(message));
            }
        }
    }

    async fn receive(&mut self) -> Option<Result<Routed>> {
        match &mut self.source {
            Source::Channel {
                messages,
                queue,
                gate,
                ..
            } => {
                let message = messages.recv().await?;
                gate.leave(*queue);
                Some(message)
            }
            Source::Direct {
                stream,
                routing,
                pending,
            } => loop {
                if let Some(message) = pending.pop_front() {
                    return Some(Ok(message));
                }
                let input = stream.as_mut()?;
                match input.next().await {
                    Some(Ok(SourceMessage::Rows(batch))) => {
                        if let Err(error) = routing.route(&batch) {
                            *stream = None;
                            return Some(Err(error));
                        }
                        pending.extend(routing.outbox.drain(..).map(|(_, m)| m));
                    }
                    Some(Ok(SourceMessage::Barrier(barrier, at))) => {
                        routing.record(&barrier, at);
                        if barrier.end {
                            // Processors answer the final checkpoint at their own end.
                            continue;
                        }
                        if barrier.stop {
                            *stream = None;
                        }
                        return Some(Ok(Routed::Barrier { source: 0, barrier }));
                    }
                    Some(Err(error)) => {
                        *stream = None;
                        return Some(Err(error));
                    }
                    None => {
                        *stream = None;
                        if routing.unstamp.is_some() {
                            // Each source ended with its own mark.
                            return routing.finish().err().map(Err);
                        }
                        return Some(Ok(Routed::End { source: 0 }));
                    }
                }
            },
        }
    }
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("processors", &self.processors)
            .finish_non_exhaustive()
    }
}

impl Router {
    pub fn new(
        inputs: Vec<RouterInput>,
        processors: usize,
        as_is: bool,
        checkpoint: Option<CheckpointTarget>,
    ) -> Self {
        Router {
            inputs,
            processors,
            as_is,
            checkpoint,
            run: Mutex::new(None),
        }
    }

    /// The coordinator of a new run, when checkpoints are on.
    fn coordinator(&self, context: &TaskContext) -> Result<Option<Arc<Coordinator>>> {
        let config = CheckpointConfig::of(context.session_config().options());
        if !config.enabled() {
            return Ok(None);
        }
        let Some(target) = self.checkpoint.clone() else {
            return exec_err!(
                "checkpoints are on, but this process table function call cannot be checkpointed (the plan was made without them)"
            );
        };
        let sources = self
            .inputs
            .iter()
            .map(|input| input.plan.output_partitioning().partition_count())
            .sum();
        let jobs = context.session_config().get_extension::<Jobs>();
        Coordinator::start(config, target, sources, self.processors, jobs).map(Some)
    }

    /// Partition `partition` of `input` (source `source` of the run) as messages: with
    /// barriers when checkpoints are on.
    fn messages(
        input: &RouterInput,
        partition: usize,
        source: usize,
        context: Arc<TaskContext>,
        coordinator: Option<&Arc<Coordinator>>,
    ) -> Result<Messages> {
        Ok(match coordinator {
            Some(coordinator) => {
                region::messages(&input.plan, partition, context, coordinator, source)?
            }
            None => input
                .plan
                .execute(partition, context)?
                .map(|batch| batch.map(SourceMessage::Rows))
                .boxed(),
        })
    }

    /// Processor `processor`'s messages. The first processor to ask starts a run: one
    /// routing task per input partition.
    pub fn inbox(&self, processor: usize, context: Arc<TaskContext>) -> Result<Inbox> {
        let clock = SessionClock::of(context.session_config());
        let sources: Vec<usize> = self
            .inputs
            .iter()
            .map(|input| input.plan.output_partitioning().partition_count())
            .collect();
        if let [input] = self.inputs.as_slice()
            && (self.as_is || (sources[0] == 1 && self.processors == 1))
        {
            let partition = if self.as_is { processor } else { 0 };
            // Checkpoints need set semantics (the plan says so), so one processor here.
            let coordinator = self.coordinator(&context)?;
            let mut routing =
                SourceRouting::new(0, input.keys.clone(), input.event_time.clone(), 1, clock);
            routing.restore(coordinator.as_deref());
            self.unstamp(&mut routing, input, 0, processor)?;
            let sources = input.sources_per_processor();
            return Ok(Inbox {
                source: Source::Direct {
                    stream: Some(Self::messages(
                        input,
                        partition,
                        0,
                        context,
                        coordinator.as_ref(),
                    )?),
                    routing: Box::new(routing),
                    pending: VecDeque::new(),
                },
                sources: vec![sources],
                aligner: Aligner::new(sources),
                coordinator,
            });
        }
        if self.as_is {
            // Partition `processor` of each input, already partitioned by key upstream: a run
            // of this processor's own.
            let mut run = self.start(context, clock, Some(processor))?;
            let messages = run.receivers[0]
                .take()
                .expect("a fresh run has its receiver");
            let sources: Vec<usize> = self
                .inputs
                .iter()
                .map(RouterInput::sources_per_processor)
                .collect();
            return Ok(Inbox {
                source: Source::Channel {
                    messages,
                    queue: 0,
                    gate: run.gate,
                    _tasks: run.tasks,
                },
                aligner: Aligner::new(sources.iter().sum()),
                sources,
                coordinator: run.coordinator,
            });
        }
        let mut run = self.run.lock().unwrap_or_else(|p| p.into_inner());
        let taken = run
            .as_ref()
            .is_none_or(|r| r.receivers[processor].is_none());
        if taken {
            *run = Some(self.start(context, clock, None)?);
        }
        let run = run.as_mut().expect("started above");
        Ok(Inbox {
            source: Source::Channel {
                messages: run.receivers[processor]
                    .take()
                    .expect("a fresh run has every receiver"),
                queue: processor,
                gate: run.gate.clone(),
                _tasks: run.tasks.clone(),
            },
            aligner: Aligner::new(sources.iter().sum()),
            sources,
            coordinator: run.coordinator.clone(),
        })
    }

    /// A run of every input partition routed to the processors; with `only`, a run of one
    /// processor of its own over that partition of each input (rows partitioned upstream).
    fn start(
        &self,
        context: Arc<TaskContext>,
        clock: Arc<dyn ProcessingClock>,
        only: Option<usize>,
    ) -> Result<Run> {
        let processors = if only.is_some() { 1 } else { self.processors };
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..processors).map(|_| unbounded_channel()).unzip();
        let gate = Gate::new(processors, QUEUED_MESSAGES);
        let coordinator = self.coordinator(&context)?;
        let mut tasks = Vec::new();
        let partitions: Vec<(&RouterInput, usize)> = match only {
            Some(partition) => self.inputs.iter().map(|input| (input, partition)).collect(),
            None => self
                .inputs
                .iter()
                .flat_map(|input| {
                    (0..input.plan.output_partitioning().partition_count()).map(move |p| (input, p))
                })
                .collect(),
        };
        for (source, (input, partition)) in partitions.into_iter().enumerate() {
            let stream = Self::messages(
                input,
                partition,
                source,
                context.clone(),
                coordinator.as_ref(),
            )?;
            let mut routing = SourceRouting::new(
                source,
                input.keys.clone(),
                input.event_time.clone(),
                processors,
                clock.clone(),
            );
            routing.restore(coordinator.as_deref());
            if let Some(processor) = only {
                let offset = self.inputs[..source]
                    .iter()
                    .map(RouterInput::sources_per_processor)
                    .sum();
                self.unstamp(&mut routing, input, offset, processor)?;
            }
            let mut sending = Sending {
                senders: senders.clone(),
                gate: gate.clone(),
                routing,
            };
            tasks.push(SpawnedTask::spawn(async move {
                let mut stream = stream;
                while let Some(message) = stream.next().await {
                    let outcome = match message {
                        Ok(SourceMessage::Rows(batch)) => sending.routing.route(&batch),
                        Ok(SourceMessage::Barrier(barrier, at)) => {
                            sending.routing.record(&barrier, at);
                            if barrier.end {
                                // Processors answer the final checkpoint at their own end.
                                continue;
                            }
                            let stop = barrier.stop;
                            sending.barrier(barrier).await;
                            if stop {
                                // Stopped at a savepoint: no end of input.
                                return;
                            }
                            continue;
                        }
                        Err(error) => Err(error),
                    };
                    if let Err(error) = outcome {
                        sending.fail(error);
                        return;
                    }
                    sending.send().await;
                }
                if sending.routing.unstamp.is_some() {
                    // Each source ended with its own mark.
                    if let Err(error) = sending.routing.finish() {
                        sending.fail(error);
                    }
                    return;
                }
                sending.end();
            }));
        }
        Ok(Run {
            receivers: receivers.into_iter().map(Some).collect(),
            gate,
            tasks: Arc::new(tasks),
            coordinator,
        })
    }
}

impl Router {
    /// Makes `routing` take `input`'s stamped rows for `processor`, if it is stamped; its
    /// sources numbered from `offset`.
    fn unstamp(
        &self,
        routing: &mut SourceRouting,
        input: &RouterInput,
        offset: usize,
        processor: usize,
    ) -> Result<()> {
        if let Some(stamped) = &input.stamped {
            let route = routes(self.processors)?[processor];
            routing.unstamp = Some(Unstamp::new(
                &stamped.function,
                offset,
                stamped.sources,
                route,
                processor,
                input.event_time.clone(),
            ));
        }
        Ok(())
    }
}

/// The routing of one input partition.
struct SourceRouting {
    source: usize,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    processors: usize,
    /// Messages of the latest batch, by processor.
    outbox: Vec<(usize, Routed)>,
    clock: Arc<dyn ProcessingClock>,
    watermark: SourceWatermark,
    hashes: Vec<u64>,
    /// With an input stamped before a cluster's shuffle: its messages unstamped.
    unstamp: Option<Unstamp>,
    unstamped: Vec<Routed>,
}

impl SourceRouting {
    fn new(
        source: usize,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        event_time: Option<EventTime>,
        processors: usize,
        clock: Arc<dyn ProcessingClock>,
    ) -> Self {
        SourceRouting {
            source,
            keys,
            processors,
            outbox: Vec::new(),
            clock,
            watermark: SourceWatermark::new(event_time),
            hashes: Vec::new(),
            unstamp: None,
            unstamped: Vec::new(),
        }
    }

    /// Takes the row times seen before the checkpoint the run restores from.
    fn restore(&mut self, coordinator: Option<&Coordinator>) {
        if let Some(position) = coordinator
            .and_then(Coordinator::restored)
            .and_then(|r| r.manifest.sources.get(self.source))
        {
            self.watermark.max_time = position.max_time;
        }
    }

    /// Tells the checkpoint of `barrier` where this source stood.
    fn record(&self, barrier: &Barrier, at: crate::checkpoint::barrier::SourceAt) {
        barrier.pending.source(
            self.source,
            SourcePosition {
                table: at.table,
                partition: at.partition,
                rows: at.rows,
                max_time: self.watermark.max_time,
                file: at.file,
            },
        );
    }

    /// With a stamped input: whether every source ended.
    fn finish(&self) -> Result<()> {
        self.unstamp.as_ref().map_or(Ok(()), Unstamp::finish)
    }

    fn route(&mut self, batch: &RecordBatch) -> Result<()> {
        if let Some(unstamp) = &mut self.unstamp {
            unstamp.messages(batch, self.clock.now_millis(), &mut self.unstamped)?;
            self.outbox
                .extend(self.unstamped.drain(..).map(|message| (0, message)));
            return Ok(());
        }
        let rows = batch.num_rows();
        let processors = self.processors;
        // Row times and the watermark before each row.
        let (times, before) = match self.watermark.pass(batch)? {
            Some(BatchTimes { times, before }) => (Some(times), Some(before)),
            None => (None, None),
        };
        let after = self.watermark.current();
        let now = self.clock.now_millis();

        if self.keys.is_empty() || processors == 1 {
            // Every row to processor 0, as it came: nothing to pick.
            if rows > 0 || (after.is_some() && before.is_some()) {
                let message = Routed::Rows {
                    source: self.source,
                    batch: batch.clone(),
                    times,
                    before,
                    after,
                    now,
                };
                self.outbox.push((0, message));
            }
            return Ok(());
        }
        key_hashes(&self.keys, batch, &mut self.hashes)?;
        let (indices, ranges) = rows_by_processor(&self.hashes, processors);
        for (processor, range) in ranges.into_iter().enumerate() {
            // A processor without rows still hears of an advanced watermark.
            if range.is_empty() && (after.is_none() || before.is_none()) {
                continue;
            }
            let rows = indices.slice(range.start, range.len());
            fn pick<T: Copy>(values: &Option<Vec<T>>, rows: &[u32]) -> Option<Vec<T>> {
                values
                    .as_ref()
                    .map(|v| rows.iter().map(|&r| v[r as usize]).collect())
            }
            let message = Routed::Rows {
                source: self.source,
                times: pick(&times, &rows),
                before: pick(&before, &rows),
                after,
                now,
                batch: if rows.len() == batch.num_rows() {
                    batch.clone()
                } else {
                    take_record_batch(batch, &UInt32Array::new(rows, None))?
                },
            };
            self.outbox.push((processor, message));
        }
        Ok(())
    }
}

/// Into `hashes`, the routing hash of each row's `keys` in `batch`.
pub(super) fn key_hashes(
    keys: &[Arc<dyn PhysicalExpr>],
    batch: &RecordBatch,
    hashes: &mut Vec<u64>,
) -> Result<()> {
    let rows = batch.num_rows();
    let keys = keys
        .iter()
        .map(|k| k.evaluate(batch)?.into_array(rows))
        .collect::<Result<Vec<_>>>()?;
    hashes.clear();
    hashes.resize(rows, 0);
    create_hashes(&keys, &ROUTING_STATE, hashes)?;
    Ok(())
}

/// The processor of a key's hash: the hash scaled to `0..processors` (a multiply, where `%`
/// would divide).
pub(super) fn processor_of(hash: u64, processors: usize) -> usize {
    ((u128::from(hash) * processors as u128) >> 64) as usize
}

/// The processor each key of `keys` (the PARTITION BY columns) goes to among `processors`:
/// where the routers send its rows (a restore into another processor count places the
/// state it saved there).
fn processors_of_keys(keys: &[ArrayRef], processors: usize) -> Result<Vec<usize>> {
    let rows = keys.first().map_or(0, |k| k.len());
    let mut hashes = vec![0; rows];
    if !keys.is_empty() {
        create_hashes(keys, &ROUTING_STATE, &mut hashes)?;
    }
    Ok(hashes
        .into_iter()
        .map(|h| processor_of(h, processors))
        .collect())
}

/// Of some keys (their key columns, and their count for a function without keys), which go
/// to processor `processor` of `processors` — without keys, every row goes to processor 0.
fn keys_of_processor(
    processor: usize,
    processors: usize,
) -> impl Fn(&[ArrayRef], usize) -> Result<Vec<bool>> {
    move |keys, count| {
        if keys.is_empty() {
            return Ok(vec![processor == 0; count]);
        }
        Ok(processors_of_keys(keys, processors)?
            .into_iter()
            .map(|p| p == processor)
            .collect())
    }
}

/// Restores processor `processor` of `processors` (of the stateful operator `name`) from the
/// checkpoint `coordinator` restores, if any: from its own saved state when the count is the
/// same (`restore(state, None)`), else from every saved processor's state, keeping the keys
/// that are now its own (`restore(state, Some((index, keep)))`).
pub(crate) fn restore_processor(
    coordinator: &Coordinator,
    name: &str,
    processor: usize,
    processors: usize,
    mut restore: impl FnMut(&[u8], Option<(usize, &KeepKeys<'_>)>) -> Result<()>,
) -> Result<()> {
    let Some(restored) = coordinator.restored() else {
        return Ok(());
    };
    let saved = restored.manifest.processors.len();
    let restoring = if saved == processors {
        restored
            .state(processor)
            .and_then(|state| restore(&state, None))
    } else {
        let keep = keys_of_processor(processor, processors);
        (0..saved).try_for_each(|index| restore(&restored.state(index)?, Some((index, &keep))))
    };
    restoring.map_err(|error| {
        let error = match error {
            DataFusionError::Execution(message) => message,
            other => other.to_string(),
        };
        DataFusionError::Execution(format!(
            "the state of `{name}` (uid `{}`) in checkpoint {} does not restore: {error}",
            coordinator.target().uid,
            restored.dir.display()
        ))
    })
}

/// The processor of each row by its key's hash, as the rows of every processor in input
/// order: one index buffer, holding processor 0's rows, then processor 1's, ..., and each
/// processor's range in it. A counting sort: a pass to count, one to place, no growing.
///
/// Both passes walk [`RUNS`] stretches of the rows side by side, each with its own counters:
/// with one set, consecutive rows of a processor would update the same counter, each update
/// waiting for the one before. A stretch's rows for a processor are placed after those of
/// the stretches before it, so input order holds.
fn rows_by_processor(
    hashes: &[u64],
    processors: usize,
) -> (ScalarBuffer<u32>, Vec<std::ops::Range<usize>>) {
    const RUNS: usize = 4;
    let processor_of = |hash: u64| processor_of(hash, processors);
    let length = hashes.len().div_ceil(RUNS).max(1);
    let runs: Vec<&[u64]> = hashes.chunks(length).collect();
    // Per run and processor (run-major): first a count, then the next place to fill.
    let mut next = vec![0usize; runs.len() * processors];
    for step in 0..length {
        for (run, hashes) in runs.iter().enumerate() {
            if let Some(hash) = hashes.get(step) {
                next[run * processors + processor_of(*hash)] += 1;
            }
        }
    }
    let mut ranges = Vec::with_capacity(processors);
    let mut start = 0;
    for processor in 0..processors {
        let first = start;
        for run in 0..runs.len() {
            let count = &mut next[run * processors + processor];
            (start, *count) = (start + *count, start);
        }
        ranges.push(first..start);
    }
    let mut indices = vec![0u32; hashes.len()];
    for step in 0..length {
        for (run, hashes) in runs.iter().enumerate() {
            if let Some(hash) = hashes.get(step) {
                let place = &mut next[run * processors + processor_of(*hash)];
                indices[*place] = (run * length + step) as u32;
                *place += 1;
            }
        }
    }
    (ScalarBuffer::from(indices), ranges)
}

/// A routing task's sending side: a channel per processor, behind the gate.
struct Sending {
    senders: Vec<UnboundedSender<Result<Routed>>>,
    gate: Arc<Gate>,
    routing: SourceRouting,
}

impl Sending {
    /// Hands the latest batch's messages on, waiting where a processor is behind.
    async fn send(&mut self) {
        for (processor, message) in std::mem::take(&mut self.routing.outbox) {
            self.gate.enter(processor).await;
            // A processor that is gone (its query stopped) needs nothing more.
            let _ = self.senders[processor].send(Ok(message));
        }
    }

    /// Hands a barrier to every processor, after the rows before it.
    async fn barrier(&mut self, barrier: Barrier) {
        for (processor, sender) in self.senders.iter().enumerate() {
            self.gate.enter(processor).await;
            let _ = sender.send(Ok(Routed::Barrier {
                source: self.routing.source,
                barrier: barrier.clone(),
            }));
        }
    }

    fn end(&self) {
        for (processor, sender) in self.senders.iter().enumerate() {
            self.gate.enter_now(processor);
            let _ = sender.send(Ok(Routed::End {
                source: self.routing.source,
            }));
        }
    }

    fn fail(&self, error: DataFusionError) {
        let text = error.to_string();
        for (processor, sender) in self.senders.iter().enumerate() {
            self.gate.enter_now(processor);
            let _ = sender.send(Err(DataFusionError::Execution(text.clone())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_goes_to_one_processor_in_input_order_and_equal_hashes_together() {
        let all: Vec<u64> = (0..1000u64)
            .map(|i| (i % 37).wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .chain([0, u64::MAX, u64::MAX / 2, u64::MAX / 2 + 1])
            .collect();
        for (length, processors) in [0, 1, 2, 5, 1003, 1004]
            .into_iter()
            .flat_map(|length| [1, 2, 3, 7].map(|processors| (length, processors)))
        {
            let hashes = &all[..length];
            let (indices, ranges) = rows_by_processor(hashes, processors);
            assert_eq!(ranges.len(), processors);
            assert_eq!(ranges.first().unwrap().start, 0);
            assert_eq!(ranges.last().unwrap().end, hashes.len());
            let mut processor_of = vec![usize::MAX; hashes.len()];
            for (processor, range) in ranges.iter().enumerate() {
                let rows = &indices[range.clone()];
                assert!(rows.windows(2).all(|w| w[0] < w[1]), "input order");
                for row in rows {
                    assert_eq!(processor_of[*row as usize], usize::MAX, "row {row} twice");
                    processor_of[*row as usize] = processor;
                }
            }
            for (row, hash) in hashes.iter().enumerate() {
                assert_ne!(processor_of[row], usize::MAX, "row {row} lost");
                let first = hashes.iter().position(|h| h == hash).unwrap();
                assert_eq!(processor_of[row], processor_of[first]);
            }
            if length > 100 {
                assert!(ranges.iter().all(|r| !r.is_empty()), "{ranges:?}");
            }
        }
    }
}
