//! What the runtime's own aggregations (the updating GROUP BY, window aggregates) ask of
//! one aggregate call's accumulators.

use datafusion::arrow::array::{ArrayRef, BooleanArray};
use datafusion::common::Result;

/// The accumulators of one call, for every group of a partition.
pub(crate) trait Aggregator: Send {
    /// Folds rows into their groups, in row order: rows where `add` is true are
    /// accumulated, rows where `retract` is true taken back. `rows` gives the input batch's
    /// row at each position, for errors, when the rows were gathered out of it.
    fn fold(
        &mut self,
        args: &[ArrayRef],
        groups: &[usize],
        add: &BooleanArray,
        retract: &BooleanArray,
        total_groups: usize,
        rows: Option<&[u32]>,
    ) -> Result<()>;

    /// The results of the listed groups, which stay.
    fn evaluate(&mut self, groups: &[usize]) -> Result<ArrayRef>;

    /// Folds group `from` into group `into` (two session windows become one); `from` is
    /// cleared after.
    fn merge(&mut self, into: usize, from: usize, total_groups: usize) -> Result<()>;

    /// Starts the listed groups over (they emptied).
    fn clear(&mut self, groups: &[usize]);

    /// The accumulators of groups `0..total_groups`, one row per group, which stay (a
    /// checkpoint).
    fn save(&mut self, total_groups: usize) -> Result<ArrayRef>;

    /// Makes the accumulator of each listed group the one `saved` (an array of `save`) holds
    /// at the same position.
    fn restore(&mut self, saved: &ArrayRef, groups: &[usize], total_groups: usize) -> Result<()>;
}
