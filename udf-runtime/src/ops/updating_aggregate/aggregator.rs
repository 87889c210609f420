//! What an updating GROUP BY asks of one aggregate call's accumulators.

use datafusion::arrow::array::{ArrayRef, BooleanArray};
use datafusion::common::Result;

/// The accumulators of one call, for every group of a partition.
pub(super) trait Aggregator: Send {
    /// Folds rows into their groups, each group named at most once: rows where `add` is true
    /// are accumulated, rows where `retract` is true taken back.
    fn fold(
        &mut self,
        args: &[ArrayRef],
        groups: &[usize],
        add: &BooleanArray,
        retract: &BooleanArray,
        total_groups: usize,
    ) -> Result<()>;

    /// The results of the listed groups, which stay.
    fn evaluate(&mut self, groups: &[usize]) -> Result<ArrayRef>;

    /// Starts the listed groups over (they emptied).
    fn clear(&mut self, groups: &[usize]);
}
