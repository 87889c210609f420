//! Routing from the input partitions to the virtual processors, done by the PTF exec itself
//! (DataFusion's repartitioning carries no watermarks, DESIGN §5).
//!
//! One task per input partition hashes each batch's PARTITION BY keys and sends every
//! processor its rows, with the watermark of that input partition in force before each row
//! and after the batch. A processor that gets no rows of a batch still hears of a watermark
//! that advanced; the end of an input partition is its watermark +∞.

use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, AsArray, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{cast, take_record_batch};
use datafusion::arrow::datatypes::{DataType as ArrowType, Int64Type, TimeUnit};
use datafusion::common::hash_utils::{RandomState, create_hashes};
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{DataFusionError, Result, exec_err};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use futures::StreamExt;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::clock::SessionClock;
use super::time::{EventTime, WatermarkEmission};
use udf_core::ptf::ProcessingClock;

/// Fixed, so a key goes to the same processor in every run.
const ROUTING_STATE: RandomState = RandomState::with_seed(0x5eed);

/// What a processor receives from one input partition.
#[derive(Debug)]
pub enum Routed {
    /// Rows for this processor (perhaps none), in their input order.
    Rows {
        source: usize,
        batch: RecordBatch,
        /// The row times (epoch ms), with event time.
        times: Option<Vec<i64>>,
        /// The source's watermark in force before each row, with event time.
        before: Option<Vec<Option<i64>>>,
        /// The source's watermark after the batch.
        after: Option<i64>,
        /// Processing time (ms) when the batch entered the operator: state TTL is measured
        /// on it.
        now: i64,
    },
    /// The input partition has no more rows: its watermark is +∞.
    End { source: usize },
}

/// Routes the input to `processors` processors by a hash of `keys` (all to processor 0
/// without keys), or — `as_is` — each input partition to the processor of the same number.
pub struct Router {
    input: Arc<dyn ExecutionPlan>,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    event_time: Option<EventTime>,
    processors: usize,
    as_is: bool,
    /// The channels of the current run, taken one by one by the processors.
    run: Mutex<Option<Run>>,
}

struct Run {
    receivers: Vec<Option<UnboundedReceiver<Result<Routed>>>>,
    tasks: Arc<Vec<SpawnedTask<()>>>,
}

/// A processor's end of the routing: its messages, and the tasks feeding it (stopped when
/// every processor has dropped its end).
pub struct Inbox {
    pub messages: UnboundedReceiver<Result<Routed>>,
    pub sources: usize,
    _tasks: Arc<Vec<SpawnedTask<()>>>,
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
        input: Arc<dyn ExecutionPlan>,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        event_time: Option<EventTime>,
        processors: usize,
        as_is: bool,
    ) -> Self {
        Router {
            input,
            keys,
            event_time,
            processors,
            as_is,
            run: Mutex::new(None),
        }
    }

    /// Processor `processor`'s messages. The first processor to ask starts a run: one
    /// routing task per input partition.
    pub fn inbox(&self, processor: usize, context: Arc<TaskContext>) -> Result<Inbox> {
        let clock = SessionClock::of(context.session_config());
        let mut run = self.run.lock().unwrap_or_else(|p| p.into_inner());
        let taken = run
            .as_ref()
            .is_none_or(|r| r.receivers[processor].is_none());
        if taken {
            *run = Some(self.start(context, clock)?);
        }
        let run = run.as_mut().expect("started above");
        Ok(Inbox {
            messages: run.receivers[processor]
                .take()
                .expect("a fresh run has every receiver"),
            sources: if self.as_is {
                1
            } else {
                self.input.output_partitioning().partition_count()
            },
            _tasks: run.tasks.clone(),
        })
    }

    fn start(&self, context: Arc<TaskContext>, clock: Arc<dyn ProcessingClock>) -> Result<Run> {
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..self.processors).map(|_| unbounded_channel()).unzip();
        let sources = self.input.output_partitioning().partition_count();
        let mut tasks = Vec::with_capacity(sources);
        for source in 0..sources {
            let stream = self.input.execute(source, context.clone())?;
            // As is, a processor hears only of its own input partition (source 0 to it).
            let (senders, source) = if self.as_is {
                (vec![senders[source].clone()], 0)
            } else {
                (senders.clone(), source)
            };
            let keys = self.keys.clone();
            let event_time = self.event_time.clone();
            let clock = clock.clone();
            tasks.push(SpawnedTask::spawn(async move {
                let mut routing = SourceRouting {
                    source,
                    keys,
                    event_time,
                    senders,
                    clock,
                    max_time: None,
                    hashes: Vec::new(),
                };
                let mut stream = stream;
                while let Some(batch) = stream.next().await {
                    let outcome = batch.and_then(|batch| routing.route(&batch));
                    if let Err(error) = outcome {
                        routing.fail(error);
                        return;
                    }
                }
                routing.end();
            }));
        }
        Ok(Run {
            receivers: receivers.into_iter().map(Some).collect(),
            tasks: Arc::new(tasks),
        })
    }
}

/// The routing of one input partition.
struct SourceRouting {
    source: usize,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    event_time: Option<EventTime>,
    senders: Vec<UnboundedSender<Result<Routed>>>,
    clock: Arc<dyn ProcessingClock>,
    /// The largest row time seen.
    max_time: Option<i64>,
    hashes: Vec<u64>,
}

impl SourceRouting {
    fn watermark(&self) -> Option<i64> {
        let delay = self.event_time.as_ref().map_or(0, |t| t.delay_millis);
        self.max_time.map(|t| t.saturating_sub(delay))
    }

    fn route(&mut self, batch: &RecordBatch) -> Result<()> {
        let rows = batch.num_rows();
        let processors = self.senders.len();
        // Row times and the watermark before each row.
        let (times, before) = match &self.event_time {
            Some(event_time) => {
                let times = event_time_millis(batch, event_time)?;
                let mut before = Vec::with_capacity(rows);
                let start = self.watermark();
                for &time in &times {
                    before.push(match event_time.emission {
                        WatermarkEmission::EveryRow => self.watermark(),
                        WatermarkEmission::EveryBatch => start,
                    });
                    self.max_time = Some(self.max_time.map_or(time, |m| m.max(time)));
                }
                (Some(times), Some(before))
            }
            None => (None, None),
        };
        let after = self.watermark();
        let now = self.clock.now_millis();

        let mut rows_of: Vec<Vec<u32>> = vec![Vec::new(); processors];
        if self.keys.is_empty() || processors == 1 {
            rows_of[0] = (0..rows as u32).collect();
        } else {
            let keys = self
                .keys
                .iter()
                .map(|k| k.evaluate(batch)?.into_array(rows))
                .collect::<Result<Vec<_>>>()?;
            self.hashes.clear();
            self.hashes.resize(rows, 0);
            create_hashes(&keys, &ROUTING_STATE, &mut self.hashes)?;
            for (row, hash) in self.hashes.iter().enumerate() {
                rows_of[(*hash % processors as u64) as usize].push(row as u32);
            }
        }
        for (processor, rows) in rows_of.into_iter().enumerate() {
            // A processor without rows still hears of an advanced watermark.
            if rows.is_empty() && (after.is_none() || before.is_none()) {
                continue;
            }
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
                    take_record_batch(batch, &UInt32Array::from(rows))?
                },
            };
            // A processor that is gone (its query stopped) needs nothing more.
            let _ = self.senders[processor].send(Ok(message));
        }
        Ok(())
    }

    fn end(&self) {
        for sender in &self.senders {
            let _ = sender.send(Ok(Routed::End {
                source: self.source,
            }));
        }
    }

    fn fail(&self, error: DataFusionError) {
        let text = error.to_string();
        for sender in &self.senders {
            let _ = sender.send(Err(DataFusionError::Execution(text.clone())));
        }
    }
}

/// The `on_time` column of `batch` as epoch milliseconds; NULL is an error.
fn event_time_millis(batch: &RecordBatch, event_time: &EventTime) -> Result<Vec<i64>> {
    let column = batch.column(event_time.column);
    if column.null_count() > 0 {
        return exec_err!(
            "the time attribute `{}` is NULL in a row; `on_time` columns need a time in every row",
            event_time.name
        );
    }
    let tz = match column.data_type() {
        ArrowType::Timestamp(_, tz) => tz.clone(),
        other => {
            return exec_err!(
                "the time attribute `{}` is {other}, not a timestamp",
                event_time.name
            );
        }
    };
    let millis = cast(column, &ArrowType::Timestamp(TimeUnit::Millisecond, tz))?;
    let millis = cast(&millis, &ArrowType::Int64)?;
    Ok(millis.as_primitive::<Int64Type>().values().to_vec())
}
