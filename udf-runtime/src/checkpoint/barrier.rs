//! A checkpoint under way and the barrier that carries it. A source emits the barrier after
//! the last rows it read before the checkpoint and records its position; every operator
//! between the source and the stateful one passes it on in order with the rows; a processor
//! that has the barrier from all its sources saves its state. When every source and
//! processor has answered, the manifest is written and the checkpoint is complete.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use datafusion::arrow::array::RecordBatch;
use datafusion::common::Result;
use tokio::sync::watch;

use super::manifest::{self, Manifest, SinkFile, SourcePosition, StateFile};
use super::{files, lock};

/// Called with the manifest of each checkpoint that completes.
pub type OnComplete = Arc<dyn Fn(&Manifest) + Send + Sync>;

/// What a checkpointed source yields: rows, or a barrier after the rows before it.
#[derive(Debug)]
pub enum SourceMessage {
    Rows(RecordBatch),
    Barrier(Barrier, SourceAt),
}

/// What a stateful operator emits for a committing sink: rows, or a barrier after the rows
/// from before its checkpoint (the operator saved its state for it).
#[derive(Debug)]
pub enum Flow {
    Rows(RecordBatch),
    Barrier(Barrier),
}

impl Flow {
    /// The rows of `flow` as a record batch stream of `schema`, the barriers left out (no
    /// committing sink reads it).
    pub fn rows_of(
        flow: futures::stream::BoxStream<'static, Result<Flow>>,
        schema: datafusion::arrow::datatypes::SchemaRef,
    ) -> datafusion::execution::SendableRecordBatchStream {
        use futures::StreamExt;
        let batches = flow.filter_map(|flow| {
            std::future::ready(match flow {
                Ok(Flow::Rows(batch)) => Some(Ok(batch)),
                Ok(Flow::Barrier(_)) => None,
                Err(error) => Some(Err(error)),
            })
        });
        Box::pin(datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(schema, batches))
    }
}

/// Where a source stood when it emitted a barrier (the router adds the row times it saw).
#[derive(Debug, Clone)]
pub struct SourceAt {
    pub table: String,
    pub partition: usize,
    pub rows: u64,
    /// Of a file scan: where in its files.
    pub file: Option<manifest::FilePosition>,
}

#[derive(Clone)]
pub struct Barrier {
    pub id: u64,
    /// A savepoint that stops the query: sources read nothing after it, and processors end
    /// without the end of input (no timers fire).
    pub stop: bool,
    /// The final checkpoint, at the end of input: each source answers once it has no more
    /// rows, each processor once it has done everything (its timers fired at the end).
    pub end: bool,
    pub pending: Arc<Pending>,
}

impl Barrier {
    /// Processor `processor` saved `state` for this checkpoint after waiting `alignment` for
    /// its barriers. The run's last checkpoint (at its end, or a stop) is written before the
    /// processor goes on to end, so that it is complete when the query's output is; any
    /// other is written in the background.
    pub fn saved(&self, processor: usize, state: Vec<u8>, alignment: Duration) {
        let background = !(self.end || self.stop);
        self.pending
            .processor(processor, state, alignment, background);
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match (self.stop, self.end) {
            (true, _) => ", stop",
            (_, true) => ", end",
            _ => "",
        };
        write!(f, "Barrier({}{kind})", self.id)
    }
}

/// How a checkpoint ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    Complete {
        dir: PathBuf,
        bytes: u64,
        duration: Duration,
        /// The longest a processor waited between its first and last barrier.
        alignment: Duration,
    },
    Failed(String),
    /// A source ended before its barrier left it: the input is done, nothing to resume.
    Abandoned,
}

/// One checkpoint under way: the answers so far.
pub struct Pending {
    pub id: u64,
    dir: PathBuf,
    started: Instant,
    answers: Mutex<Answers>,
    outcome: watch::Sender<Option<Outcome>>,
    /// Called with the manifest once the checkpoint is complete (fed tables learn what is
    /// durable).
    on_complete: Vec<OnComplete>,
    /// Called with the outcome as the checkpoint ends, when no one waits for it.
    on_outcome: Mutex<Option<OnOutcome>>,
}

/// Told how a checkpoint ended.
pub type OnOutcome = Box<dyn FnOnce(u64, &Outcome) + Send>;

struct Answers {
    manifest: Manifest,
    sources: Vec<Option<SourcePosition>>,
    processors: Vec<Option<StateFile>>,
    /// Per partition of a committing sink: the files it finished before the barrier.
    sinks: Vec<Option<Vec<SinkFile>>>,
    alignment: Duration,
    closed: bool,
}

impl Pending {
    pub fn new(
        manifest: Manifest,
        dir: PathBuf,
        sources: usize,
        processors: usize,
        sinks: usize,
        on_complete: Vec<OnComplete>,
    ) -> Arc<Self> {
        Arc::new(Pending {
            id: manifest.id,
            dir,
            started: Instant::now(),
            answers: Mutex::new(Answers {
                manifest,
                sources: vec![None; sources],
                processors: vec![None; processors],
                sinks: vec![None; sinks],
                alignment: Duration::ZERO,
                closed: false,
            }),
            outcome: watch::Sender::new(None),
            on_complete,
            on_outcome: Mutex::new(None),
        })
    }

    /// Calls `notify` with the outcome once the checkpoint ends.
    pub fn notify(&self, notify: OnOutcome) {
        *lock(&self.on_outcome) = Some(notify);
    }

    pub fn outcome(&self) -> watch::Receiver<Option<Outcome>> {
        self.outcome.subscribe()
    }

    fn answers(&self) -> std::sync::MutexGuard<'_, Answers> {
        lock(&self.answers)
    }

    /// Source `source` emitted the barrier at `position`.
    pub fn source(&self, source: usize, position: SourcePosition) {
        let mut answers = self.answers();
        answers.sources[source] = Some(position);
        self.maybe_complete(answers);
    }

    /// Processor `processor` saved `state` after waiting `alignment` for its barriers. The
    /// file is written and synced on a blocking thread when `background` (and there is a
    /// runtime): the processor goes on with the rows after the barrier meanwhile (see
    /// [`Barrier::saved`]).
    fn processor(
        self: &Arc<Self>,
        processor: usize,
        state: Vec<u8>,
        alignment: Duration,
        background: bool,
    ) {
        let pending = self.clone();
        let write = move || pending.write_state(processor, &state, alignment);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) if background => drop(runtime.spawn_blocking(write)),
            _ => write(),
        }
    }

    fn write_state(&self, processor: usize, state: &[u8], alignment: Duration) {
        let name = format!("state-{processor}");
        let written = files::write(&self.dir.join(&name), state);
        let mut answers = self.answers();
        match written {
            Ok(()) => {
                answers.processors[processor] = Some(StateFile {
                    name,
                    bytes: (state.len() + files::HEADER) as u64,
                    checksum: files::crc32(state),
                });
                answers.alignment = answers.alignment.max(alignment);
                self.maybe_complete(answers);
            }
            Err(error) => self.close(answers, Outcome::Failed(error.to_string())),
        }
    }

    /// Sink partition `partition` finished `files` before the barrier.
    pub fn sink(&self, partition: usize, files: Vec<SinkFile>) {
        let mut answers = self.answers();
        answers.sinks[partition] = Some(files);
        self.maybe_complete(answers);
    }

    /// The checkpoint cannot complete.
    pub fn fail(&self, reason: String) {
        let answers = self.answers();
        self.close(answers, Outcome::Failed(reason));
    }

    /// A source ended before the barrier reached it.
    pub fn abandon(&self) {
        let answers = self.answers();
        self.close(answers, Outcome::Abandoned);
    }

    fn close(&self, mut answers: std::sync::MutexGuard<'_, Answers>, outcome: Outcome) {
        if !answers.closed {
            answers.closed = true;
            let notify = lock(&self.on_outcome).take();
            if let Some(notify) = notify {
                notify(self.id, &outcome);
            }
            self.outcome.send_replace(Some(outcome));
        }
    }

    fn maybe_complete(&self, mut answers: std::sync::MutexGuard<'_, Answers>) {
        if answers.closed
            || answers.sources.iter().any(Option::is_none)
            || answers.processors.iter().any(Option::is_none)
            || answers.sinks.iter().any(Option::is_none)
        {
            return;
        }
        let mut manifest = answers.manifest.clone();
        manifest.sources = answers.sources.iter().flatten().cloned().collect();
        manifest.processors = answers.processors.iter().flatten().cloned().collect();
        manifest.sink = answers.sinks.iter().flatten().flatten().cloned().collect();
        // Complete once the manifest is written; then the output it covers is committed (a
        // crash in between is mended by the restore, which commits again).
        let written =
            manifest::commit(&self.dir, &manifest).and_then(|()| manifest.commit_output());
        let outcome = match written {
            Ok(()) => {
                for hook in &self.on_complete {
                    hook(&manifest);
                }
                Outcome::Complete {
                    dir: self.dir.clone(),
                    bytes: manifest.state_bytes(),
                    duration: self.started.elapsed(),
                    alignment: answers.alignment,
                }
            }
            Err(error) => Outcome::Failed(error.to_string()),
        };
        answers.manifest = manifest;
        self.close(answers, outcome);
    }
}

/// Creates the directory of a checkpoint about to be triggered.
pub fn prepare(dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        datafusion::common::DataFusionError::Execution(format!(
            "checkpoint directory {} could not be created: {e}",
            dir.display()
        ))
    })
}
