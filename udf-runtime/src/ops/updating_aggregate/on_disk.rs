//! The groups of an updating GROUP BY processor on disk, with the disk backend
//! (`state.backend.type = 'fjall'`): one store entry per group — its key in Arrow's row format
//! as the store key, its row count and saved accumulators (as a checkpoint saves them) in
//! the row format as the value — in the processor's keyspace of the run's store
//! (`DiskStore::groups`). Which groups stay in memory and how they move is `residency.rs`.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::Result;
use datafusion::physical_plan::metrics::Count;

use crate::streaming::state::disk::store::{DiskStore, ProcessorStore};

/// What a group is taken to need before the first measurement: little, so that the first
/// measurement comes early.
const FIRST_GUESS_BYTES: u64 = 64;

/// Groups the budget holds at the least, however large each is.
pub(super) const MIN_GROUPS: usize = 2;

/// Groups per batch when a checkpoint reads the groups on disk.
const SAVED_BATCH_ROWS: usize = 4096;

/// A move out of this many groups or more is written as new tables at once
/// (`ProcessorStore::ingest`), fewer one by one.
const INGEST_AT: usize = 1024;

/// What a processor's groups on disk show in EXPLAIN ANALYZE.
pub(crate) struct OnDiskMetrics {
    pub moved_out: Count,
    pub moved_in: Count,
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
    /// Groups on disk now.
    pub(super) on_disk: usize,
    /// For each group in memory, the number of the batch that last touched it.
    pub(super) last_used: Vec<u64>,
    batches: u64,
    metrics: OnDiskMetrics,
}

impl GroupsOnDisk {
    pub(crate) fn new(
        run: Arc<DiskStore>,
        processor: usize,
        budget: u64,
        key_types: Vec<DataType>,
        metrics: OnDiskMetrics,
    ) -> Result<Self> {
        Ok(GroupsOnDisk {
            store: run.groups(processor)?,
            _run: run,
            keys: RowConverter::new(key_types.into_iter().map(SortField::new).collect())?,
            values: None,
            budget,
            limit: usize::try_from(budget / FIRST_GUESS_BYTES)
                .unwrap_or(usize::MAX)
                .max(MIN_GROUPS),
            on_disk: 0,
            last_used: Vec::new(),
            batches: 0,
            metrics,
        })
    }

    /// The listed groups (of `total_groups` in memory) are in use now.
    pub(super) fn touch(&mut self, groups: &[usize], total_groups: usize) {
        self.batches += 1;
        self.last_used.resize(total_groups, 0);
        for &group in groups {
            self.last_used[group] = self.batches;
        }
    }

    /// Looks for the groups of `keys` (one row each) on disk and takes those found out of
    /// the store: their positions in `keys`, and their saved columns (row count, then each
    /// call's accumulators).
    pub(super) fn take_out(
        &mut self,
        keys: &[ArrayRef],
    ) -> Result<Option<(Vec<usize>, Vec<ArrayRef>)>> {
        let Some(values) = &self.values else {
            return Ok(None);
        };
        if self.on_disk == 0 {
            return Ok(None);
        }
        let rows = self.keys.convert_columns(keys)?;
        let mut found = Vec::new();
        let mut entries = Vec::new();
        for (position, key) in rows.iter().enumerate() {
            if let Some(entry) = self.store.get(key.as_ref())? {
                self.store.remove(key.as_ref())?;
                found.push(position);
                entries.push(entry);
            }
        }
        if found.is_empty() {
            return Ok(None);
        }
        self.on_disk -= found.len();
        self.metrics.moved_in.add(found.len());
        let parser = values.parser();
        let columns = values.convert_rows(entries.iter().map(|e| parser.parse(e)))?;
        Ok(Some((found, columns)))
    }

    /// Writes the groups of `saved` (a saved batch, `width` key columns first) to the store.
    pub(super) fn put(&mut self, saved: &RecordBatch, width: usize) -> Result<()> {
        if saved.num_rows() == 0 {
            return Ok(());
        }
        let value_columns = &saved.columns()[width..];
        let values = match &mut self.values {
            Some(values) => values,
            None => self.values.insert(RowConverter::new(
                value_columns
                    .iter()
                    .map(|c| SortField::new(c.data_type().clone()))
                    .collect(),
            )?),
        };
        let keys = self.keys.convert_columns(&saved.columns()[..width])?;
        let entries = values.convert_columns(value_columns)?;
        let mut writes: Vec<(&[u8], &[u8])> = keys
            .iter()
            .zip(entries.iter())
            .map(|(key, entry)| (key.data(), entry.data()))
            .collect();
        if writes.len() >= INGEST_AT {
            // Keys are distinct (one per group); ingesting takes them in order.
            writes.sort_unstable_by(|a, b| a.0.cmp(b.0));
            self.store
                .ingest(writes.iter().map(|&(key, entry)| (key, Some(entry))))?;
        } else {
            for (key, entry) in &writes {
                self.store.insert(key, entry)?;
            }
        }
        self.on_disk += writes.len();
        self.metrics.moved_out.add(writes.len());
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
