//! The working buffers of one batch's fold, kept from batch to batch: a batch then allocates
//! little beyond the changelog it hands on. (With glibc, a megabyte allocated and freed per
//! batch is returned to the system and faulted back in at the next batch, which cost about a
//! third of the aggregation's time.)

use udf_core::RowKind;

use super::rounds::Rounds;

/// What a row did to its group.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// A taken-back row of a group that does not exist.
    Dropped,
    /// The group is new: `+I` new.
    Created,
    /// The group's result may have changed: `-U` old, `+U` new unless equal.
    Changed,
    /// The group emptied: `-D` old.
    Emptied,
}

#[derive(Default)]
pub(super) struct Scratch {
    /// The group of each row.
    pub(super) groups: Vec<usize>,
    /// The group at each position (rows in round order).
    pub(super) group_at: Vec<usize>,
    pub(super) rounds: Rounds,
    /// What the row at each position did.
    pub(super) outcomes: Vec<Outcome>,
    /// Whether the row at each position changed its group's result.
    pub(super) changed: Vec<bool>,
    /// Per output row: the input row it is of, its result and its kind.
    pub(super) source_rows: Vec<u32>,
    pub(super) values: Vec<u32>,
    pub(super) kinds: Vec<RowKind>,
}
