//! An updating GROUP BY over unbounded input with checkpoints on: one partition of it as a
//! keyed operator that the router feeds by group key (`checkpoint/operator.rs`), saving its
//! live groups (`snapshot.rs`) at each checkpoint.

use datafusion::arrow::array::RecordBatch;
use datafusion::common::Result;

use super::aggregation::UpdatingAggregation;
use crate::checkpoint::operator::{KeyedOperator, Rows};
use crate::streaming::state::KeepKeys;

pub(super) struct Partition {
    pub aggregation: UpdatingAggregation,
    /// What the GROUP BY computes, for errors.
    pub name: String,
}

impl KeyedOperator for Partition {
    fn name(&self) -> &str {
        &self.name
    }

    fn push(&mut self, rows: Rows<'_>) -> Result<Vec<RecordBatch>> {
        Ok(self.aggregation.push(rows.batch)?.into_iter().collect())
    }

    /// An updating GROUP BY has emitted everything by the end of its input.
    fn finish(&mut self) -> Result<Vec<RecordBatch>> {
        Ok(Vec::new())
    }

    fn snapshot(&mut self) -> Result<Vec<u8>> {
        self.aggregation.snapshot()
    }

    fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        self.aggregation.restore(snapshot, keep)
    }
}
