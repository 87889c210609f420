//! A window aggregate over unbounded input with checkpoints on: one processor of it as a
//! keyed operator that the router feeds by group key with the rows' times and watermarks
//! (`checkpoint/operator.rs`), saving its open windows and watermarks (`snapshot.rs`) at
//! each checkpoint.

use datafusion::arrow::array::RecordBatch;
use datafusion::common::{Result, exec_err};

use super::aggregation::Aggregation;
use super::processor::TimedRows;
use crate::checkpoint::operator::{KeyedOperator, Rows};
use crate::streaming::state::KeepKeys;

pub(super) struct Partition {
    pub aggregation: Aggregation,
    /// What the window aggregate computes, for errors.
    pub name: String,
}

impl KeyedOperator for Partition {
    fn name(&self) -> &str {
        &self.name
    }

    fn push(&mut self, rows: Rows<'_>) -> Result<Vec<RecordBatch>> {
        let (Some(times), Some(before)) = (rows.times, rows.before) else {
            return exec_err!("the rows of `{}` came without their times", self.name);
        };
        self.aggregation
            .rows(rows.source, rows.batch.clone(), times, before, rows.after)
    }

    fn end_of(&mut self, source: usize) -> Result<Vec<RecordBatch>> {
        self.aggregation.end(source)
    }

    /// Every input partition's end has fired every window.
    fn finish(&mut self) -> Result<Vec<RecordBatch>> {
        Ok(Vec::new())
    }

    fn snapshot(&mut self) -> Result<Vec<u8>> {
        match &mut self.aggregation {
            Aggregation::Panes(panes) => panes.snapshot(),
            Aggregation::Sessions(sessions) => sessions.snapshot(),
        }
    }

    fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        match &mut self.aggregation {
            Aggregation::Panes(panes) => panes.restore(snapshot, keep),
            Aggregation::Sessions(sessions) => sessions.restore(snapshot, keep),
        }
    }
}
