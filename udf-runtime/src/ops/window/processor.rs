//! The loop of an event-time operator fed by the router (window aggregates, OVER windows over
//! a stream): rows with their times and watermarks go in, the rows the watermark releases
//! come out, the end of each input partition is its watermark +∞. Checkpoint barriers are
//! refused: under checkpoints a processor runs as a keyed operator (`Checkpointed`, through
//! `checkpoint/operator.rs`) instead.

use std::collections::VecDeque;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{Result, exec_err};
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;

use crate::checkpoint::coordinator::CheckpointTarget;
use crate::checkpoint::operator::{KeyedOperator, Rows};
use crate::ops::routing::routed::Routed;
use crate::ops::routing::router::{Inbox, Router, RouterInput, Stamped};
use crate::streaming::event_time::EventTime;
use crate::streaming::state::KeepKeys;

/// What an event-time operator does with its processor's input.
pub(crate) trait TimedRows: Send + 'static {
    /// Rows of input partition `source`, each row's time and the watermark before it, then
    /// the watermark after them: the rows released.
    fn rows(
        &mut self,
        source: usize,
        batch: RecordBatch,
        times: &[i64],
        before: &[Option<i64>],
        after: Option<i64>,
    ) -> Result<Vec<RecordBatch>>;

    /// Input partition `source` ended: the rows released.
    fn end(&mut self, source: usize) -> Result<Vec<RecordBatch>>;

    /// The state, as bytes, for a checkpoint.
    fn snapshot(&mut self) -> Result<Vec<u8>>;

    /// Takes back a checkpoint's state (of the keys `keep` says are this processor's, when
    /// given), beside any taken before.
    fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()>;
}

/// One processor under checkpoints: a keyed operator (`checkpoint/operator.rs`) that the
/// router feeds by key with the rows' times and watermarks.
pub(crate) struct Checkpointed<T> {
    pub state: T,
    /// What the operator computes, for errors.
    pub name: String,
}

impl<T: TimedRows> KeyedOperator for Checkpointed<T> {
    fn name(&self) -> &str {
        &self.name
    }

    fn push(&mut self, rows: Rows<'_>) -> Result<Vec<RecordBatch>> {
        let (Some(times), Some(before)) = (rows.times, rows.before) else {
            return exec_err!("the rows of `{}` came without their times", self.name);
        };
        self.state
            .rows(rows.source, rows.batch.clone(), times, before, rows.after)
    }

    fn end_of(&mut self, source: usize) -> Result<Vec<RecordBatch>> {
        self.state.end(source)
    }

    /// Every input partition's end has released everything.
    fn finish(&mut self) -> Result<Vec<RecordBatch>> {
        Ok(Vec::new())
    }

    fn snapshot(&mut self) -> Result<Vec<u8>> {
        self.state.snapshot()
    }

    fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        self.state.restore(snapshot, keep)
    }
}

/// The router of an event-time operator: the rows of `input` to `processors` by `keys`,
/// with their times and watermarks; checkpointed as `target` when given. On a cluster the
/// rows were `stamped` with their routes and watermarks before the cluster's shuffle, and
/// each processor reads its own partition of it.
pub(crate) fn router(
    input: &Arc<dyn ExecutionPlan>,
    keys: &[Arc<dyn PhysicalExpr>],
    time: &EventTime,
    processors: usize,
    target: Option<CheckpointTarget>,
    stamped: Option<Stamped>,
) -> Router {
    let each_reads_its_own = stamped.is_some();
    let input = RouterInput {
        plan: input.clone(),
        keys: keys.to_vec(),
        event_time: Some(time.clone()),
        stamped,
    };
    Router::new(vec![input], processors, each_reads_its_own, target)
}

/// One processor's output: `state` fed from `inbox`; `what` names the operator in errors.
pub(crate) fn stream<T: TimedRows>(
    inbox: Inbox,
    state: T,
    schema: SchemaRef,
    what: &'static str,
) -> SendableRecordBatchStream {
    let processor = Processor {
        inbox,
        state,
        ready: VecDeque::new(),
        done: false,
        what,
    };
    let stream = futures::stream::unfold(processor, |mut processor| async move {
        let batch = processor.next().await?;
        Some((batch, processor))
    });
    Box::pin(RecordBatchStreamAdapter::new(schema, stream))
}

struct Processor<T> {
    inbox: Inbox,
    state: T,
    /// Released rows not yet handed on.
    ready: VecDeque<RecordBatch>,
    done: bool,
    what: &'static str,
}

impl<T: TimedRows> Processor<T> {
    async fn next(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if let Some(batch) = self.ready.pop_front() {
                return Some(Ok(batch));
            }
            if self.done {
                return None;
            }
            let released = match self.inbox.next().await {
                None => {
                    self.done = true;
                    continue;
                }
                Some(Err(error)) => Err(error),
                Some(Ok(Routed::Rows {
                    source,
                    batch,
                    times: Some(times),
                    before: Some(before),
                    after,
                    ..
                })) => self.state.rows(source, batch, &times, &before, after),
                Some(Ok(Routed::Rows { .. })) => {
                    exec_err!("the rows of {} came without their times", self.what)
                }
                Some(Ok(Routed::End { source })) => self.state.end(source),
                Some(Ok(Routed::Barrier { .. } | Routed::Checkpoint { .. })) => {
                    exec_err!("{} does not take part in checkpoints yet", self.what)
                }
            };
            match released {
                Ok(released) => self.ready.extend(released),
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
    }
}
