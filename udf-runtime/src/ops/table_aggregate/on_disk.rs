//! The groups of a table aggregate's changelog on disk, with the disk backend
//! (`state.backend.type = 'fjall'`): one store entry per group — its key in Arrow's row format
//! as the store key, and as the value a byte saying whether its `emit_value` rows are out
//! followed by its accumulator as the function encodes it (the layout a checkpoint saves,
//! `snapshot.rs`) — in the processor's keyspace of the run's store (`DiskStore::groups`).
//! Which groups stay in memory and how they move is `residency.rs`.
//!
//! A group read back leaves its entry in the store (removing it would cost a write per
//! group): the copy in memory is the one that counts, and moving the group out again
//! overwrites the entry. A table aggregate's groups never empty (its input is insert-only),
//! so no entry is ever removed while the run lasts.

use std::sync::Arc;

use datafusion::common::Result;

use crate::ops::updating_aggregate::on_disk::{
    FIRST_GUESS_BYTES, GroupsStore, OnDiskMetrics, groups_within,
};
use crate::streaming::state::disk::sorted_reads::SortedReads;
use crate::streaming::state::disk::store::{DiskStore, ProcessorStore};

/// A move out of this many groups or more is written as new tables at once
/// (`ProcessorStore::ingest`), fewer one by one.
const INGEST_AT: usize = 1024;

/// One processor's groups on disk, and what it knows of those in memory.
pub(crate) struct AccumulatorsOnDisk {
    store: ProcessorStore,
    /// Held so that the run's store stays open while this processor runs.
    _run: Arc<DiskStore>,
    /// Bytes the groups in memory may take.
    pub(super) budget: u64,
    /// Groups in memory before a move out.
    pub(super) limit: usize,
    /// Entries in the store (about: an entry overwritten counts again).
    pub(super) entries: usize,
    /// For each group in memory, the number of the batch that last touched it.
    pub(super) last_used: Vec<u64>,
    /// The number of the current batch.
    pub(super) batch: u64,
    reads: SortedReads,
    pub(super) metrics: OnDiskMetrics,
}

impl AccumulatorsOnDisk {
    pub(crate) fn new(start: GroupsStore, processor: usize) -> Result<Self> {
        let GroupsStore {
            run,
            budget,
            metrics,
            ..
        } = start;
        Ok(AccumulatorsOnDisk {
            store: run.groups(processor)?,
            _run: run,
            budget,
            limit: groups_within(budget, FIRST_GUESS_BYTES, 1),
            entries: 0,
            last_used: Vec::new(),
            batch: 0,
            reads: SortedReads::default(),
            metrics,
        })
    }

    /// Looks for the groups of `keys` (store keys, ascending, none twice) in the store,
    /// calling `found` with the position in `keys` and the entry of each one there.
    pub(super) fn read_back(
        &mut self,
        keys: &[&[u8]],
        mut found: impl FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<()> {
        if self.entries == 0 || keys.is_empty() {
            return Ok(());
        }
        let mut count = 0;
        self.reads.read(
            &self.store,
            keys,
            |_| true,
            |at, entry| {
                count += 1;
                found(at, entry)
            },
        )?;
        self.metrics.moved_in.add(count);
        Ok(())
    }

    /// Writes `leaving` (store key, entry; no key twice) to the store.
    pub(super) fn put(&mut self, mut leaving: Vec<(&[u8], &[u8])>) -> Result<()> {
        self.metrics.moved_out.add(leaving.len());
        self.entries += leaving.len();
        if leaving.len() >= INGEST_AT {
            // Ingesting takes the keys in order.
            leaving.sort_unstable_by(|a, b| a.0.cmp(b.0));
            self.store
                .ingest(leaving.iter().map(|&(key, entry)| (key, Some(entry))))
        } else {
            leaving
                .iter()
                .try_for_each(|(key, entry)| self.store.insert(key, entry))
        }
    }

    /// Calls `each` with every entry in the store (key, entry), in key order.
    pub(super) fn each_entry(
        &self,
        mut each: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        if self.entries == 0 {
            return Ok(());
        }
        for entry in self.store.scan(&[]) {
            let (key, value) = entry?;
            each(&key, &value)?;
        }
        Ok(())
    }
}
