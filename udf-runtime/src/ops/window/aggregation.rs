//! A window aggregate's processor state: fixed windows (`panes.rs`) or sessions that merge
//! (`sessions.rs`), fed as the event-time loop (`processor.rs`) feeds it, saved by
//! checkpoints (`snapshot.rs`).

use datafusion::arrow::array::RecordBatch;
use datafusion::common::Result;

use super::panes::WindowAggregation;
use super::processor::TimedRows;
use super::sessions::SessionAggregation;
use crate::streaming::state::KeepKeys;

/// A processor's open windows: fixed ones, or sessions that merge.
pub(super) enum Aggregation {
    Panes(WindowAggregation),
    Sessions(SessionAggregation),
}

impl TimedRows for Aggregation {
    fn rows(
        &mut self,
        source: usize,
        batch: RecordBatch,
        times: &[i64],
        before: &[Option<i64>],
        after: Option<i64>,
    ) -> Result<Vec<RecordBatch>> {
        match self {
            Aggregation::Panes(panes) => panes.rows(source, &batch, times, before, after),
            Aggregation::Sessions(sessions) => sessions.rows(source, &batch, times, before, after),
        }
    }

    fn end(&mut self, source: usize) -> Result<Vec<RecordBatch>> {
        match self {
            Aggregation::Panes(panes) => panes.end(source),
            Aggregation::Sessions(sessions) => sessions.end(source),
        }
    }

    fn snapshot(&mut self) -> Result<Vec<u8>> {
        match self {
            Aggregation::Panes(panes) => panes.snapshot(),
            Aggregation::Sessions(sessions) => sessions.snapshot(),
        }
    }

    fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        match self {
            Aggregation::Panes(panes) => panes.restore(snapshot, keep),
            Aggregation::Sessions(sessions) => sessions.restore(snapshot, keep),
        }
    }
}
