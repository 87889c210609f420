//! The groups of open fixed windows on disk, with the disk backend
//! (`state.backend.type = 'fjall'`): one store entry per window and group — the window's end
//! and start (order-preserving, big-endian) then the group's key in Arrow's row format as the
//! store key, its saved accumulators (as a checkpoint saves them) in the row format as the
//! value — in the processor's keyspace of the run's store (`DiskStore::groups`). Store keys
//! sort by window end, as the windows fire: a window that fires reads its groups on disk by
//! one prefix scan, and once windows fired every key before the next end is dead, dropped by
//! compactions (`dead_below.rs`), not removed one by one. Which groups stay in memory and how
//! they move is `pane_residency.rs`.
//!
//! A group read back leaves its entry in the store (removing it would cost a write per
//! group): the copy in memory counts, and moving the group out again overwrites the entry.
//! Whoever reads a window's entries skips those of groups in memory (`Shadowed`).

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::row::{RowConverter, Rows, SortField};
use datafusion::common::Result;

use crate::ops::updating_aggregate::on_disk::{
    FIRST_GUESS_BYTES, GroupsStore, OnDiskMetrics, groups_within, saved_rows,
};
use crate::streaming::state::disk::sorted_reads::SortedReads;
use crate::streaming::state::disk::store::{DiskStore, ProcessorStore};

/// Groups per batch when a window that fires, or a checkpoint, reads groups on disk.
pub(super) const CHUNK_ROWS: usize = 4096;

/// A write of this many entries or more goes to the store as new tables at once
/// (`ProcessorStore::ingest`), fewer one by one.
const INGEST_AT: usize = 1024;

/// Bytes of a store key before the group's key: the window's end and start.
const WINDOW_BYTES: usize = 16;

/// A window `(start, end)` as the prefix of its store keys: end first, so that keys sort as
/// windows fire; the sign bit flipped, so that big-endian bytes sort as the numbers do.
fn window_prefix((start, end): (i64, i64)) -> [u8; WINDOW_BYTES] {
    let mut prefix = [0; WINDOW_BYTES];
    prefix[..8].copy_from_slice(&((end as u64) ^ (1 << 63)).to_be_bytes());
    prefix[8..].copy_from_slice(&((start as u64) ^ (1 << 63)).to_be_bytes());
    prefix
}

/// The store keys of the groups of `window` whose keys in the row format are `rows`, laid
/// end to end (one buffer for a batch's keys, not one each), with where each ends.
fn store_keys(window: (i64, i64), rows: &Rows) -> (Vec<u8>, Vec<usize>) {
    let prefix = window_prefix(window);
    let mut bytes = Vec::with_capacity(rows.num_rows() * WINDOW_BYTES + rows.size());
    let mut ends = Vec::with_capacity(rows.num_rows());
    for row in rows.iter() {
        bytes.extend_from_slice(&prefix);
        bytes.extend_from_slice(row.data());
        ends.push(bytes.len());
    }
    (bytes, ends)
}

/// The keys of `store_keys`, in order.
fn each_key<'a>(bytes: &'a [u8], ends: &'a [usize]) -> impl Iterator<Item = &'a [u8]> {
    ends.iter().scan(0, move |start, &end| {
        let key = &bytes[*start..end];
        *start = end;
        Some(key)
    })
}

/// Groups of a window on disk, read: how many, their key columns and each call's saved
/// accumulators.
pub(super) struct GroupsRead {
    pub count: usize,
    pub keys: Vec<ArrayRef>,
    pub saved: Vec<ArrayRef>,
}

/// The keys (in the row format) of a window's groups in memory that also have an entry on
/// disk: those entries are stale.
pub(super) type Shadowed = HashSet<Box<[u8]>>;

/// One processor's groups of open windows on disk.
pub(crate) struct PanesOnDisk {
    store: ProcessorStore,
    /// Held so that the run's store stays open while this processor runs.
    _run: Arc<DiskStore>,
    /// Group keys in the row format.
    keys: RowConverter,
    /// Store values: a group's saved accumulators in the row format. Made at the first move
    /// out, when the saved types are known; nothing is on disk before.
    values: Option<RowConverter>,
    /// Bytes the groups in memory may take.
    pub(super) budget: u64,
    /// Groups in memory (over every open window) before a move out.
    pub(super) limit: usize,
    /// The number of the current batch, for the recency of groups.
    pub(super) batch: u64,
    reads: SortedReads,
    pub(super) metrics: OnDiskMetrics,
}

impl PanesOnDisk {
    pub(crate) fn new(start: GroupsStore, processor: usize) -> Result<Self> {
        let GroupsStore {
            run,
            budget,
            key_types,
            metrics,
        } = start;
        Ok(PanesOnDisk {
            store: run.groups(processor)?,
            _run: run,
            keys: RowConverter::new(key_types.into_iter().map(SortField::new).collect())?,
            values: None,
            budget,
            limit: groups_within(budget, FIRST_GUESS_BYTES, 1),
            batch: 0,
            reads: SortedReads::default(),
            metrics,
        })
    }

    /// The listed `keys` (one row each) in the row format, for `Shadowed`.
    pub(super) fn shadowed(&self, keys: &[ArrayRef]) -> Result<Shadowed> {
        let rows = self.keys.convert_columns(keys)?;
        Ok(rows.iter().map(|row| row.data().into()).collect())
    }

    /// Looks for the groups of `keys` (one row each) of `window` in the store: the positions
    /// in `keys` of those found, and each call's saved accumulators of them.
    pub(super) fn read_back(
        &mut self,
        window: (i64, i64),
        keys: &[ArrayRef],
    ) -> Result<Option<(Vec<usize>, Vec<ArrayRef>)>> {
        let Some(values) = &self.values else {
            return Ok(None);
        };
        let rows = self.keys.convert_columns(keys)?;
        let (bytes, ends) = store_keys(window, &rows);
        let keys: Vec<&[u8]> = each_key(&bytes, &ends).collect();
        let read = self.reads.read_values(&self.store, &keys, values)?;
        if let Some((found, _)) = &read {
            self.metrics.moved_in.add(found.len());
        }
        Ok(read)
    }

    /// Writes the groups of `window` whose key columns are `keys` and whose calls' saved
    /// accumulators are `saved` (a row each) to the store.
    pub(super) fn put(
        &mut self,
        window: (i64, i64),
        keys: &[ArrayRef],
        saved: &[ArrayRef],
    ) -> Result<()> {
        let values = saved_rows(&mut self.values, saved)?;
        let rows = self.keys.convert_columns(keys)?;
        let entries = values.convert_columns(saved)?;
        let (bytes, ends) = store_keys(window, &rows);
        let mut writes: Vec<(&[u8], &[u8])> = each_key(&bytes, &ends)
            .zip(entries.iter())
            .map(|(key, entry)| (key, entry.data()))
            .collect();
        self.metrics.moved_out.add(writes.len());
        if writes.len() >= INGEST_AT {
            // Keys are distinct (one per group); ingesting takes them in order.
            writes.sort_unstable_by(|a, b| a.0.cmp(b.0));
            self.store
                .ingest(writes.iter().map(|&(key, entry)| (key, Some(entry))))
        } else {
            writes
                .iter()
                .try_for_each(|(key, entry)| self.store.insert(key, entry))
        }
    }

    /// Calls `each` with the groups on disk of `window`, a chunk at a time, leaving out the
    /// `shadowed` ones (those in memory).
    pub(super) fn each_group(
        &self,
        window: (i64, i64),
        shadowed: &Shadowed,
        mut each: impl FnMut(GroupsRead) -> Result<()>,
    ) -> Result<()> {
        let Some(values) = &self.values else {
            return Ok(());
        };
        let prefix = window_prefix(window);
        let (key_parser, value_parser) = (self.keys.parser(), values.parser());
        let mut entries = self.store.scan(&prefix).peekable();
        while entries.peek().is_some() {
            let chunk = entries
                .by_ref()
                .take(CHUNK_ROWS)
                .collect::<Result<Vec<_>>>()?;
            let kept: Vec<(&[u8], &[u8])> = chunk
                .iter()
                .map(|(key, value)| (&key[WINDOW_BYTES..], &value[..]))
                .filter(|(group, _)| !shadowed.contains(*group))
                .collect();
            if kept.is_empty() {
                continue;
            }
            each(GroupsRead {
                count: kept.len(),
                keys: self
                    .keys
                    .convert_rows(kept.iter().map(|(key, _)| key_parser.parse(key)))?,
                saved: values
                    .convert_rows(kept.iter().map(|(_, entry)| value_parser.parse(entry)))?,
            })?;
        }
        Ok(())
    }

    /// Every window that ends at `end` or before fired: its groups on disk are dead.
    pub(super) fn fired_up_to(&self, end: i64) -> Result<()> {
        // Keys of windows that end later begin with a greater end.
        let next = end.saturating_add(1);
        self.store.dead_below(&window_prefix((i64::MIN, next))[..8])
    }
}
