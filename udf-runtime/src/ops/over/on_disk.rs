//! The keys of a row-time OVER window not in memory, with the disk backend
//! (`state.backend.type = 'fjall'`): one store entry per key in the processor's keyspace of
//! the run's store (`DiskStore::groups`) — the key in Arrow's row format as the store key, and
//! as the value the time it last emitted, its accumulators as a checkpoint saves them (row
//! format) and the rows in its frame, each its time and its input columns (row format):
//!
//! `[1 byte: emitted?][8: last time][4: n][n: accumulators]([8: time][4: n][n: row])*`
//!
//! (integers little-endian). A key that comes back takes its entry out of the store (a
//! tombstone): the store holds exactly the keys not in memory. Which keys stay in memory and
//! how they move is `residency.rs`.

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::row::{RowConverter, Rows, SortField};
use datafusion::common::{Result, exec_err, internal_err};

use crate::ops::updating_aggregate::on_disk::{
    FIRST_GUESS_BYTES, GroupsStore, OnDiskMetrics, groups_within,
};
use crate::streaming::state::disk::sorted_reads::SortedReads;
use crate::streaming::state::disk::store::{DiskStore, ProcessorStore};

/// A move out of this many keys or more is written as new tables at once
/// (`ProcessorStore::ingest`), fewer one by one.
const INGEST_AT: usize = 1024;

/// A key's state read from disk.
pub(super) struct KeyRead<'a> {
    pub last: Option<i64>,
    pub accumulators: &'a [u8],
    /// Its frame's rows, oldest first: time and input row (row format).
    pub frame: Vec<(i64, &'a [u8])>,
}

/// The entry of a key: `last`, its accumulators and its frame's rows, in the layout above.
pub(super) fn entry(last: Option<i64>, accumulators: &[u8], frame: &[(i64, &[u8])]) -> Vec<u8> {
    let rows: usize = frame.iter().map(|(_, row)| 12 + row.len()).sum();
    let mut bytes = Vec::with_capacity(13 + accumulators.len() + rows);
    bytes.push(u8::from(last.is_some()));
    bytes.extend_from_slice(&last.unwrap_or(0).to_le_bytes());
    bytes.extend_from_slice(&(accumulators.len() as u32).to_le_bytes());
    bytes.extend_from_slice(accumulators);
    for (time, row) in frame {
        bytes.extend_from_slice(&time.to_le_bytes());
        bytes.extend_from_slice(&(row.len() as u32).to_le_bytes());
        bytes.extend_from_slice(row);
    }
    bytes
}

/// An entry read back, or an error saying it does not read.
pub(super) fn read_entry(bytes: &[u8]) -> Result<KeyRead<'_>> {
    fn take<'a>(bytes: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8]> {
        let Some(part) = bytes.get(*at..*at + n) else {
            return exec_err!("a key of the OVER window on disk does not read (cut short)");
        };
        *at += n;
        Ok(part)
    }
    fn number(part: &[u8]) -> u64 {
        let mut array = [0; 8];
        array[..part.len()].copy_from_slice(part);
        u64::from_le_bytes(array)
    }
    let mut at = 0;
    let emitted = take(bytes, &mut at, 1)?[0] == 1;
    let last = number(take(bytes, &mut at, 8)?) as i64;
    let length = number(take(bytes, &mut at, 4)?) as usize;
    let accumulators = take(bytes, &mut at, length)?;
    let mut frame = Vec::new();
    while at < bytes.len() {
        let time = number(take(bytes, &mut at, 8)?) as i64;
        let length = number(take(bytes, &mut at, 4)?) as usize;
        frame.push((time, take(bytes, &mut at, length)?));
    }
    Ok(KeyRead {
        last: emitted.then_some(last),
        accumulators,
        frame,
    })
}

/// One processor's keys on disk.
pub(crate) struct KeysOnDisk {
    store: ProcessorStore,
    /// Held so that the run's store stays open while this processor runs.
    _run: Arc<DiskStore>,
    /// Keys in the row format.
    pub(super) keys: RowConverter,
    /// Input rows in the row format.
    pub(super) rows: RowConverter,
    /// Accumulators in the row format; made at the first move out, when the saved types
    /// are known.
    pub(super) values: Option<RowConverter>,
    /// Bytes the keys in memory may take.
    pub(super) budget: u64,
    /// Keys in memory before a move out.
    pub(super) limit: usize,
    /// The number of the current batch, for the recency of keys.
    pub(super) batch: u64,
    /// For each key in memory, the number of the batch that last had a row of it.
    pub(super) last_used: Vec<u64>,
    /// Keys on disk.
    keys_on_disk: usize,
    reads: SortedReads,
    pub(super) metrics: OnDiskMetrics,
}

impl KeysOnDisk {
    pub(crate) fn new(start: GroupsStore, input: &SchemaRef, processor: usize) -> Result<Self> {
        let GroupsStore {
            run,
            budget,
            key_types,
            metrics,
        } = start;
        let fields: Vec<SortField> = input
            .fields()
            .iter()
            .map(|field| SortField::new(field.data_type().clone()))
            .collect();
        if !RowConverter::supports_fields(&fields) {
            return exec_err!(
                "state.backend.type is `fjall` (on disk), but the OVER window's input has a column type that cannot be written to disk; set it to `hashmap` for this query"
            );
        }
        Ok(KeysOnDisk {
            store: run.groups(processor)?,
            _run: run,
            keys: RowConverter::new(key_types.into_iter().map(SortField::new).collect())?,
            rows: RowConverter::new(fields)?,
            values: None,
            budget,
            limit: groups_within(budget, FIRST_GUESS_BYTES, 1),
            batch: 0,
            last_used: Vec::new(),
            keys_on_disk: 0,
            reads: SortedReads::default(),
            metrics,
        })
    }

    /// Takes the entries of `keys` (one row each, in the row format) out of the store:
    /// `found` gets the position in `keys` and the entry of each one there.
    pub(super) fn take_back(
        &mut self,
        keys: &Rows,
        mut found: impl FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<()> {
        if self.keys_on_disk == 0 || keys.num_rows() == 0 {
            return Ok(());
        }
        let mut order: Vec<usize> = (0..keys.num_rows()).collect();
        order.sort_unstable_by(|&a, &b| keys.row(a).cmp(&keys.row(b)));
        let sorted: Vec<&[u8]> = order.iter().map(|&at| keys.row(at).data()).collect();
        let mut taken = Vec::new();
        self.reads.read(
            &self.store,
            &sorted,
            |_| true,
            |at, entry| {
                taken.push(at);
                found(order[at], entry)
            },
        )?;
        for &at in &taken {
            self.store.remove(sorted[at])?;
        }
        self.keys_on_disk = self.keys_on_disk.saturating_sub(taken.len());
        self.metrics.moved_in.add(taken.len());
        Ok(())
    }

    /// Writes the entries of keys moving out: (key in the row format, entry).
    pub(super) fn put(&mut self, mut leaving: Vec<(&[u8], Vec<u8>)>) -> Result<()> {
        self.metrics.moved_out.add(leaving.len());
        self.keys_on_disk += leaving.len();
        if leaving.len() >= INGEST_AT {
            // Keys are distinct; ingesting takes them in order.
            leaving.sort_unstable_by(|a, b| a.0.cmp(b.0));
            self.store
                .ingest(leaving.iter().map(|(key, entry)| (*key, Some(&entry[..]))))
        } else {
            leaving
                .iter()
                .try_for_each(|(key, entry)| self.store.insert(key, entry))
        }
    }

    /// Every key on disk with its entry (a checkpoint).
    pub(super) fn entries(&self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        if self.keys_on_disk == 0 {
            return Ok(Vec::new());
        }
        self.store
            .scan(&[])
            .map(|entry| {
                let (key, value) = entry?;
                Ok((key.to_vec(), value.to_vec()))
            })
            .collect()
    }

    /// The accumulators' row format, which exists once a key moved out.
    pub(super) fn values(&self) -> Result<&RowConverter> {
        match &self.values {
            Some(values) => Ok(values),
            None => internal_err!("keys of the OVER window are on disk before any moved out"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{entry, read_entry};

    #[test]
    fn an_entry_reads_back_as_written() {
        let frame: Vec<(i64, &[u8])> = vec![(-5, b"first row"), (i64::MAX, b""), (7, b"x")];
        let bytes = entry(Some(-42), b"accumulators", &frame);
        let read = read_entry(&bytes).unwrap();
        assert_eq!(read.last, Some(-42));
        assert_eq!(read.accumulators, b"accumulators");
        assert_eq!(read.frame, frame);

        let never = entry(None, b"", &[]);
        let read = read_entry(&never).unwrap();
        assert_eq!(
            (read.last, read.accumulators.len(), read.frame.len()),
            (None, 0, 0)
        );
    }

    #[test]
    fn an_entry_cut_short_is_an_error_not_a_panic() {
        let bytes = entry(Some(1), b"accumulators", &[(3, b"row")]);
        for cut in [0, 5, 12, bytes.len() - 1] {
            let error = read_entry(&bytes[..cut]).err().expect("cut short");
            assert!(error.to_string().contains("cut short"), "{error}");
        }
    }
}
