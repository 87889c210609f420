//! The open sessions of keys not in memory, with the disk backend
//! (`state.backend.type = 'fjall'`), in the processor's keyspace of the run's store
//! (`DiskStore::groups`). Each session is two entries:
//!
//! - `0x00`, its end and start (big-endian, sign flipped, so keys sort as sessions close),
//!   then its key in Arrow's row format → its accumulators as a checkpoint saves them, in the
//!   row format. Sessions close in this order: the watermark's progress is one scan from
//!   where the last stopped, and once it passed them every entry before it is dead — dropped
//!   by compactions (`dead_below.rs`), not removed one by one.
//! - `0x01`, its key, then its end and start → nothing: where a key's sessions are, found by
//!   one prefix scan when a row of the key comes again.
//!
//! Sessions move by key (a key's sessions merge with one another, so they move together):
//! when a key comes back, its sessions and both entries of each leave the store (a tombstone
//! each) — the store holds exactly the sessions of keys not in memory. Which keys stay in
//! memory and how they move is `session_residency.rs`; a filter in memory of the keys that may
//! be on disk spares the scan for most keys that are not (`keys_on_disk.rs`).

use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{Result, internal_err};

use super::keys_on_disk::MaybeOnDisk;
use super::panes_on_disk::CHUNK_ROWS;
use crate::ops::updating_aggregate::on_disk::{
    FIRST_GUESS_BYTES, GroupsStore, OnDiskMetrics, groups_within, saved_rows,
};
use crate::streaming::state::disk::store::{DiskStore, ProcessorStore};

/// The first byte of a session's entry by end.
const BY_END: u8 = 0;
/// The first byte of a session's entry by key.
const BY_KEY: u8 = 1;

/// A move out of this many sessions or more is written as new tables at once
/// (`ProcessorStore::ingest`), fewer one by one.
const INGEST_AT: usize = 512;

/// `value` as big-endian bytes that sort as the numbers do.
fn ordered(value: i64) -> [u8; 8] {
    ((value as u64) ^ (1 << 63)).to_be_bytes()
}

fn from_ordered(bytes: &[u8]) -> i64 {
    let mut array = [0; 8];
    array.copy_from_slice(&bytes[..8]);
    (u64::from_be_bytes(array) ^ (1 << 63)) as i64
}

fn by_end_key(end: i64, start: i64, key: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(17 + key.len());
    bytes.push(BY_END);
    bytes.extend_from_slice(&ordered(end));
    bytes.extend_from_slice(&ordered(start));
    bytes.extend_from_slice(key);
    bytes
}

fn by_key_key(key: &[u8], end: i64, start: i64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(17 + key.len());
    bytes.push(BY_KEY);
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(&ordered(end));
    bytes.extend_from_slice(&ordered(start));
    bytes
}

/// A session to move out: its key (row format), start and end.
pub(super) struct Leaving<'a> {
    pub key: &'a [u8],
    pub start: i64,
    pub end: i64,
}

/// Sessions read from disk: each one's start and end, its key's place among the keys asked
/// for (taking back) or its key columns (closing, saving), and each call's accumulators.
pub(super) struct SessionsRead {
    pub starts: Vec<i64>,
    pub ends: Vec<i64>,
    pub owners: Vec<usize>,
    pub keys: Vec<ArrayRef>,
    pub saved: Vec<ArrayRef>,
}

impl SessionsRead {
    pub fn rows(&self) -> usize {
        self.starts.len()
    }
}

/// One processor's sessions on disk.
pub(crate) struct SessionsOnDisk {
    store: ProcessorStore,
    /// Held so that the run's store stays open while this processor runs.
    _run: Arc<DiskStore>,
    /// Keys in the row format.
    keys: RowConverter,
    /// Accumulators in the row format; made at the first move out, when the saved types
    /// are known.
    values: Option<RowConverter>,
    /// Bytes the sessions in memory may take.
    pub(super) budget: u64,
    /// Open sessions in memory before a move out.
    pub(super) limit: usize,
    /// The number of the current batch, for the recency of keys.
    pub(super) batch: u64,
    /// Sessions on disk.
    sessions: usize,
    /// Which keys may have sessions on disk.
    maybe: MaybeOnDisk,
    /// Every session on disk that ends before this closed (its entries are dead).
    closed_below: i64,
    pub(super) metrics: OnDiskMetrics,
}

impl SessionsOnDisk {
    pub(crate) fn new(start: GroupsStore, processor: usize) -> Result<Self> {
        let GroupsStore {
            run,
            budget,
            key_types,
            metrics,
        } = start;
        Ok(SessionsOnDisk {
            store: run.groups(processor)?,
            _run: run,
            keys: RowConverter::new(key_types.into_iter().map(SortField::new).collect())?,
            values: None,
            budget,
            limit: groups_within(budget, FIRST_GUESS_BYTES, 1),
            batch: 0,
            sessions: 0,
            maybe: MaybeOnDisk::new(0),
            closed_below: i64::MIN,
            metrics,
        })
    }

    /// Writes `leaving` sessions, whose calls' saved accumulators are `saved` (a row each).
    pub(super) fn put(&mut self, leaving: &[Leaving<'_>], saved: &[ArrayRef]) -> Result<()> {
        let values = saved_rows(&mut self.values, saved)?;
        let entries = values.convert_columns(saved)?;
        let mut writes: Vec<(Vec<u8>, &[u8])> = Vec::with_capacity(2 * leaving.len());
        for (session, entry) in leaving.iter().zip(entries.iter()) {
            writes.push((
                by_end_key(session.end, session.start, session.key),
                entry.data(),
            ));
            writes.push((by_key_key(session.key, session.end, session.start), &[]));
        }
        self.metrics.moved_out.add(leaving.len());
        self.sessions += leaving.len();
        for session in leaving {
            self.maybe.insert(session.key);
        }
        if leaving.len() >= INGEST_AT {
            // Keys are distinct (one pair per session); ingesting takes them in order.
            writes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            self.store
                .ingest(writes.iter().map(|(key, entry)| (&key[..], Some(*entry))))?;
        } else {
            writes
                .iter()
                .try_for_each(|(key, entry)| self.store.insert(key, entry))?;
        }
        if self.maybe.is_full() {
            self.filter_again()?;
        }
        Ok(())
    }

    /// Builds the filter of keys that may be on disk again, from the open sessions there.
    fn filter_again(&mut self) -> Result<()> {
        let mut maybe = MaybeOnDisk::new(2 * self.sessions);
        let mut first = vec![BY_END];
        first.extend_from_slice(&ordered(self.closed_below));
        for entry in self.store.from(&first, &[BY_END]) {
            let (key, _) = entry?;
            maybe.insert(&key[17..]);
        }
        self.maybe = maybe;
        Ok(())
    }

    /// Takes the open sessions of `keys` (row format) out of the store: their entries are
    /// removed, and sessions that closed while on disk (their end − 1 at or before
    /// `watermark`) are left out.
    pub(super) fn take_back(
        &mut self,
        keys: &[&[u8]],
        watermark: Option<i64>,
    ) -> Result<Option<SessionsRead>> {
        let Some(values) = &self.values else {
            return Ok(None);
        };
        if self.sessions == 0 {
            return Ok(None);
        }
        let (mut starts, mut ends, mut owners, mut found) = (vec![], vec![], vec![], vec![]);
        let mut removals = Vec::new();
        // One buffer for every key's prefix.
        let mut prefix = Vec::new();
        for (owner, key) in keys.iter().enumerate() {
            if !self.maybe.may_contain(key) {
                continue;
            }
            prefix.clear();
            prefix.push(BY_KEY);
            prefix.extend_from_slice(key);
            for entry in self.store.scan(&prefix) {
                let (entry_key, _) = entry?;
                let Some(times) = entry_key.get(prefix.len()..) else {
                    return internal_err!("a session's key on disk is cut short");
                };
                if times.len() != 16 {
                    // Arrow's row format is prefix-free: no other key begins with this one.
                    return internal_err!(
                        "a session's key on disk has {} bytes after the key",
                        times.len()
                    );
                }
                let (end, start) = (from_ordered(&times[..8]), from_ordered(&times[8..]));
                removals.push(entry_key.to_vec());
                if watermark.is_some_and(|w| end - 1 <= w) {
                    continue;
                }
                let by_end = by_end_key(end, start, key);
                let Some(value) = self.store.get(&by_end)? else {
                    return internal_err!("a session on disk has no accumulators");
                };
                found.push(value);
                removals.push(by_end);
                starts.push(start);
                ends.push(end);
                owners.push(owner);
            }
        }
        for key in &removals {
            self.store.remove(key)?;
        }
        self.sessions = self.sessions.saturating_sub(found.len());
        if found.is_empty() {
            return Ok(None);
        }
        self.metrics.moved_in.add(found.len());
        let parser = values.parser();
        let saved = values.convert_rows(found.iter().map(|value| parser.parse(value)))?;
        Ok(Some(SessionsRead {
            starts,
            ends,
            owners,
            keys: Vec::new(),
            saved,
        }))
    }

    /// Calls `each` with the sessions on disk whose end − 1 `watermark` has reached, a chunk
    /// at a time in the order they end; they are closed and their entries dead after.
    pub(super) fn close(
        &mut self,
        watermark: i64,
        mut each: impl FnMut(SessionsRead) -> Result<()>,
    ) -> Result<()> {
        if self.sessions > 0 {
            let mut by_key = Vec::new();
            self.scan_open(Some(watermark), |read, keys| {
                for (row, key) in keys.iter().enumerate() {
                    by_key.push(by_key_key(key, read.ends[row], read.starts[row]));
                }
                each(read)
            })?;
            // The entries by key of closed sessions go one by one (they sort by key); those
            // by end are dead below the mark.
            for key in &by_key {
                self.store.remove(key)?;
            }
            self.sessions = self.sessions.saturating_sub(by_key.len());
        }
        self.closed_below = watermark.saturating_add(2).max(self.closed_below);
        let mut mark = vec![BY_END];
        mark.extend_from_slice(&ordered(self.closed_below));
        self.store.dead_below(&mark)
    }

    /// Calls `each` with the open sessions on disk, a chunk at a time (a checkpoint).
    pub(super) fn each_open(&self, mut each: impl FnMut(SessionsRead) -> Result<()>) -> Result<()> {
        if self.sessions == 0 {
            return Ok(());
        }
        self.scan_open(None, |read, _| each(read))
    }

    /// Scans the sessions by end from the first open one, up to those whose end − 1
    /// `watermark` reached when given; `each` gets them a chunk at a time with their keys
    /// in the row format.
    fn scan_open(
        &self,
        watermark: Option<i64>,
        mut each: impl FnMut(SessionsRead, &[Vec<u8>]) -> Result<()>,
    ) -> Result<()> {
        let Some(values) = &self.values else {
            return Ok(());
        };
        let mut first = vec![BY_END];
        first.extend_from_slice(&ordered(self.closed_below));
        let (key_parser, value_parser) = (self.keys.parser(), values.parser());
        let mut entries = self.store.from(&first, &[BY_END]).peekable();
        loop {
            let (mut starts, mut ends, mut keys, mut found) = (vec![], vec![], vec![], vec![]);
            while starts.len() < CHUNK_ROWS {
                let Some(entry) = entries.next_if(|entry| match (entry, watermark) {
                    (Ok((key, _)), Some(w)) => from_ordered(&key[1..9]) - 1 <= w,
                    _ => true,
                }) else {
                    break;
                };
                let (key, value) = entry?;
                ends.push(from_ordered(&key[1..9]));
                starts.push(from_ordered(&key[9..17]));
                keys.push(key[17..].to_vec());
                found.push(value);
            }
            if starts.is_empty() {
                return Ok(());
            }
            let read = SessionsRead {
                starts,
                ends,
                owners: Vec::new(),
                keys: self
                    .keys
                    .convert_rows(keys.iter().map(|key| key_parser.parse(key)))?,
                saved: values.convert_rows(found.iter().map(|value| value_parser.parse(value)))?,
            };
            each(read, &keys)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{by_end_key, from_ordered, ordered};

    #[test]
    fn times_sort_as_their_bytes_do() {
        let times = [i64::MIN, -1_000, -1, 0, 1, 59_999, i64::MAX];
        for pair in times.windows(2) {
            assert!(ordered(pair[0]) < ordered(pair[1]), "{pair:?}");
        }
        for time in times {
            assert_eq!(from_ordered(&ordered(time)), time);
        }
        // Entries by end sort by end first, whatever the start and key.
        assert!(by_end_key(10, 9, b"zz") < by_end_key(11, -5, b"a"));
    }
}
