//! The groups of an updating GROUP BY processor on disk, with the disk backend
//! (`state.backend.type = 'fjall'`): one store entry per group — its key in Arrow's row format
//! as the store key, its row count and saved accumulators (as a checkpoint saves them) in
//! the row format as the value — in the processor's keyspace of the run's store
//! (`DiskStore::groups`). Which groups stay in memory and how they move is `residency.rs`.
//!
//! A group read back leaves its entry in the store (removing it would cost a write per
//! group) and the copy in memory is the one that counts: moving the group out again
//! overwrites the entry, and a group that empties in memory removes it when it leaves. A
//! batch's groups are read in key order (`SortedReads`): groups that left together, as
//! integer keys counting up do, are read by one scan.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder};

use crate::session::state_backend::{BackendType, StateBackendConfig};
use crate::streaming::state::disk::shared_run::SharedRun;
use crate::streaming::state::disk::sorted_reads::SortedReads;
use crate::streaming::state::disk::store::{DiskStore, ProcessorStore};

/// What a group is taken to need before the first measurement: little, so that the first
/// measurement comes early.
pub(crate) const FIRST_GUESS_BYTES: u64 = 64;

/// Groups the budget holds at the least, however large each is.
const MIN_GROUPS: usize = 2;

/// Groups per batch when a checkpoint reads the groups on disk.
const SAVED_BATCH_ROWS: usize = 4096;

/// How many groups `budget` holds, measured when `resident` groups took `bytes` in memory;
/// at least [`MIN_GROUPS`].
pub(crate) fn groups_within(budget: u64, bytes: u64, resident: usize) -> usize {
    let per_group = (bytes / resident.max(1) as u64).max(1);
    usize::try_from(budget / per_group)
        .unwrap_or(usize::MAX)
        .max(MIN_GROUPS)
}

/// The row format of saved accumulators like `saved`: made at the first move out, when the
/// saved types are known, and kept in `values`.
pub(crate) fn saved_rows<'a>(
    values: &'a mut Option<RowConverter>,
    saved: &[ArrayRef],
) -> Result<&'a mut RowConverter> {
    match values {
        Some(values) => Ok(values),
        None => Ok(values.insert(RowConverter::new(
            saved
                .iter()
                .map(|c| SortField::new(c.data_type().clone()))
                .collect(),
        )?)),
    }
}

/// A move out of this many groups or more is written as new tables at once
/// (`ProcessorStore::ingest`), fewer one by one.
const INGEST_AT: usize = 1024;

/// What a processor's groups on disk show in EXPLAIN ANALYZE.
pub(crate) struct OnDiskMetrics {
    /// Groups moved out of memory (not counting entries a checkpoint brought up to date).
    pub moved_out: Count,
    pub moved_in: Count,
}

/// What a processor that keeps groups beyond its budget on disk starts from: the run's
/// store, its share of the budget, its key types and its metrics.
pub(crate) struct GroupsStore {
    pub run: Arc<DiskStore>,
    pub budget: u64,
    pub key_types: Vec<DataType>,
    pub metrics: OnDiskMetrics,
}

/// Where an operator's processors keep groups: its run's store, its uid, its keys over its
/// input, its metrics and how many processors it has.
pub(crate) struct GroupsOwner<'a> {
    pub run: &'a SharedRun,
    pub uid: &'a str,
    pub keys: &'a [Arc<dyn PhysicalExpr>],
    pub input: &'a Schema,
    pub metrics: &'a ExecutionPlanMetricsSet,
    pub processors: usize,
}

impl GroupsStore {
    /// Processor `processor`'s start with the disk backend; `None` in memory, and without
    /// keys (a processor's one group stays in memory).
    pub(crate) fn open(
        owner: GroupsOwner<'_>,
        processor: usize,
        context: &TaskContext,
    ) -> Result<Option<Self>> {
        let config = StateBackendConfig::of(context.session_config().options());
        if config.backend != BackendType::Fjall || owner.keys.is_empty() {
            return Ok(None);
        }
        let (run, budget) =
            owner
                .run
                .groups_store(&config, owner.uid, processor, owner.processors)?;
        let key_types = owner
            .keys
            .iter()
            .map(|key| key.data_type(owner.input))
            .collect::<Result<Vec<_>>>()?;
        let counter = |name| MetricBuilder::new(owner.metrics).counter(name, processor);
        let metrics = OnDiskMetrics {
            moved_out: counter("groups_moved_out"),
            moved_in: counter("groups_moved_in"),
        };
        Ok(Some(GroupsStore {
            run,
            budget,
            key_types,
            metrics,
        }))
    }
}

/// One processor's groups on disk, and what it knows of those in memory.
pub(crate) struct GroupsOnDisk {
    store: ProcessorStore,
    /// Held so that the run's store stays open while this processor runs.
    _run: Arc<DiskStore>,
    /// Store keys: a group's key columns in the row format.
    keys: RowConverter,
    /// Store values: a group's row count and saved accumulators in the row format. Made at
    /// the first move out, when the saved types are known; nothing is on disk before.
    values: Option<RowConverter>,
    /// Bytes the groups in memory may take.
    pub(super) budget: u64,
    /// Groups in memory before a move out.
    pub(super) limit: usize,
    /// Entries in the store (about: an entry overwritten counts again).
    pub(super) entries: usize,
    /// For each group in memory, the number of the batch that last touched it.
    pub(super) last_used: Vec<u64>,
    /// For each group in memory, whether the store holds an entry of it.
    pub(super) copies: Vec<bool>,
    reads: SortedReads,
    batches: u64,
    pub(super) metrics: OnDiskMetrics,
}

impl GroupsOnDisk {
    pub(crate) fn new(start: GroupsStore, processor: usize) -> Result<Self> {
        let GroupsStore {
            run,
            budget,
            key_types,
            metrics,
        } = start;
        Ok(GroupsOnDisk {
            store: run.groups(processor)?,
            _run: run,
            keys: RowConverter::new(key_types.into_iter().map(SortField::new).collect())?,
            values: None,
            budget,
            limit: groups_within(budget, FIRST_GUESS_BYTES, 1),
            entries: 0,
            last_used: Vec::new(),
            copies: Vec::new(),
            reads: SortedReads::default(),
            batches: 0,
            metrics,
        })
    }

    /// The listed groups (of `total_groups` in memory) are in use now.
    pub(super) fn touch(&mut self, groups: &[usize], total_groups: usize) {
        self.batches += 1;
        self.last_used.resize(total_groups, 0);
        self.copies.resize(total_groups, false);
        for &group in groups {
            self.last_used[group] = self.batches;
        }
    }

    /// Looks for the groups of `keys` (one row each) in the store: the positions in `keys`
    /// of those found, and their saved columns (row count, then each call's accumulators).
    pub(super) fn read_back(
        &mut self,
        keys: &[ArrayRef],
    ) -> Result<Option<(Vec<usize>, Vec<ArrayRef>)>> {
        let Some(values) = &self.values else {
            return Ok(None);
        };
        if self.entries == 0 {
            return Ok(None);
        }
        let rows = self.keys.convert_columns(keys)?;
        let keys: Vec<&[u8]> = rows.iter().map(|row| row.data()).collect();
        let read = self.reads.read_values(&self.store, &keys, values)?;
        if let Some((found, _)) = &read {
            self.metrics.moved_in.add(found.len());
        }
        Ok(read)
    }

    /// Writes the groups of `leaving` (a saved batch, `width` key columns first) to the
    /// store, and removes the entries of the groups whose keys `gone` holds.
    pub(super) fn put(
        &mut self,
        leaving: &RecordBatch,
        gone: &[ArrayRef],
        width: usize,
    ) -> Result<()> {
        let value_columns = &leaving.columns()[width..];
        let values = saved_rows(&mut self.values, value_columns)?;
        let keys = self.keys.convert_columns(&leaving.columns()[..width])?;
        let entries = values.convert_columns(value_columns)?;
        let gone = self.keys.convert_columns(gone)?;
        let mut writes: Vec<(&[u8], Option<&[u8]>)> = keys
            .iter()
            .zip(entries.iter())
            .map(|(key, entry)| (key.data(), Some(entry.data())))
            .chain(gone.iter().map(|key| (key.data(), None)))
            .collect();
        if writes.len() >= INGEST_AT {
            // Keys are distinct (one per group); ingesting takes them in order.
            writes.sort_unstable_by(|a, b| a.0.cmp(b.0));
            self.store.ingest(writes.iter().copied())?;
        } else {
            for &(key, entry) in &writes {
                match entry {
                    Some(entry) => self.store.insert(key, entry)?,
                    None => self.store.remove(key)?,
                }
            }
        }
        self.entries = (self.entries + keys.num_rows()).saturating_sub(gone.num_rows());
        Ok(())
    }

    /// Calls `each` with the groups on disk as saved batches of `schema`.
    pub(super) fn each_saved(
        &self,
        schema: &SchemaRef,
        mut each: impl FnMut(RecordBatch) -> Result<()>,
    ) -> Result<()> {
        let Some(values) = &self.values else {
            return Ok(());
        };
        let (key_parser, value_parser) = (self.keys.parser(), values.parser());
        let mut entries = self.store.scan(&[]).peekable();
        while entries.peek().is_some() {
            let chunk = entries
                .by_ref()
                .take(SAVED_BATCH_ROWS)
                .collect::<Result<Vec<_>>>()?;
            let mut columns = self
                .keys
                .convert_rows(chunk.iter().map(|(key, _)| key_parser.parse(key)))?;
            columns.extend(
                values.convert_rows(chunk.iter().map(|(_, entry)| value_parser.parse(entry)))?,
            );
            each(RecordBatch::try_new(schema.clone(), columns)?)?;
        }
        Ok(())
    }
}
