//! The timers of keys on disk. A key moved out takes its timers along (`layout.rs` spells
//! their records): one record per key that comes back with it, and an entry per timer in
//! firing order, so the timers a watermark makes due are found by one scan from the front —
//! and only their keys are read back, a chunk at a time, when they fire.

use datafusion::common::{DataFusionError, Result};

use super::layout::StoreKey;
use super::store::ProcessorStore;
use super::write_set::WriteSet;
use crate::streaming::timers::KeyTimer;

/// The name length of an unnamed timer in a record.
const UNNAMED: u32 = u32::MAX;

/// The timers a watermark made due on disk: their keys in firing order (a key may come more
/// than once), and, when they are only the first part of them, the (time, id) of the last.
pub struct DueOnDisk {
    pub keys: Vec<Vec<u8>>,
    pub bound: Option<(i64, u64)>,
}

#[derive(Default)]
pub struct DiskTimers {
    /// No timer on disk fires before this (time, id) (none on disk without it). Scans for due
    /// timers start here: the entries of timers taken back before it are removed, and an LSM
    /// store steps over what is removed one entry at a time until compaction drops it.
    earliest: Option<(i64, u64)>,
    /// Timers on disk.
    held: usize,
    key: StoreKey,
    record: Vec<u8>,
}

impl DiskTimers {
    /// Timers on disk.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Writes `timers` of `key` (moving out) with the other writes of its move.
    pub fn move_out(
        &mut self,
        writes: &mut WriteSet,
        key: &[u8],
        timers: &[KeyTimer],
    ) -> Result<()> {
        if timers.is_empty() {
            return Ok(());
        }
        self.record.clear();
        for timer in timers {
            self.record.extend_from_slice(&timer.time.to_le_bytes());
            self.record.extend_from_slice(&timer.id.to_le_bytes());
            match &timer.name {
                Some(name) => {
                    let len = u32::try_from(name.len())
                        .ok()
                        .filter(|&len| len != UNNAMED)
                        .ok_or_else(|| {
                            DataFusionError::Execution(
                                "a timer name of 4 GiB cannot be kept on disk".to_owned(),
                            )
                        })?;
                    self.record.extend_from_slice(&len.to_le_bytes());
                    self.record.extend_from_slice(name.as_bytes());
                }
                None => self.record.extend_from_slice(&UNNAMED.to_le_bytes()),
            }
            writes.put(self.key.due(timer.time, timer.id, key), &[]);
            let at = (timer.time, timer.id);
            self.earliest = Some(self.earliest.map_or(at, |e| e.min(at)));
        }
        writes.put(self.key.timers(key), &self.record);
        self.held += timers.len();
        Ok(())
    }

    /// Takes the timers of `key` (coming back) out of the store, if it has any there.
    pub fn take(&mut self, store: &ProcessorStore, key: &[u8]) -> Result<Option<Vec<KeyTimer>>> {
        if self.held == 0 {
            return Ok(None);
        }
        let Some(record) = store.get(self.key.timers(key))? else {
            return Ok(None);
        };
        let timers = decode(&record).ok_or_else(damaged)?;
        store.remove(self.key.timers(key))?;
        for timer in &timers {
            store.remove(self.key.due(timer.time, timer.id, key))?;
        }
        self.held -= timers.len();
        Ok(Some(timers))
    }

    /// The timers on disk at or before `watermark` with ids below `limit`, at most `max`.
    pub fn due(
        &mut self,
        store: &ProcessorStore,
        watermark: i64,
        limit: u64,
        max: usize,
    ) -> Result<DueOnDisk> {
        let mut due = DueOnDisk {
            keys: Vec::new(),
            bound: None,
        };
        let Some((time, id)) = self.earliest.filter(|&(time, _)| time <= watermark) else {
            return Ok(due);
        };
        // What stays on disk: the first timer after the ones taken, and any registered too
        // late for this batch.
        let mut earliest: Option<(i64, u64)> = None;
        let mut stays = |at: (i64, u64)| earliest = Some(earliest.map_or(at, |e| e.min(at)));
        let mut last = None;
        let first = self.key.due(time, id, &[]).to_vec();
        for entry in store.from(&first, &StoreKey::due_prefix()) {
            let (store_key, _) = entry?;
            let (time, id, key) = StoreKey::parse_due(&store_key).ok_or_else(damaged)?;
            if time > watermark || due.keys.len() == max {
                stays((time, id));
                if due.keys.len() == max {
                    due.bound = last;
                }
                break;
            }
            if id >= limit {
                stays((time, id));
                continue;
            }
            due.keys.push(key.to_vec());
            last = Some((time, id));
        }
        self.earliest = earliest;
        Ok(due)
    }

    /// Every key's timers on disk (for a snapshot).
    pub fn all(&self, store: &ProcessorStore) -> Result<Vec<(Vec<u8>, Vec<KeyTimer>)>> {
        store
            .scan(&StoreKey::timers_prefix())
            .map(|entry| {
                let (store_key, record) = entry?;
                let key = StoreKey::parse_timers(&store_key).ok_or_else(damaged)?;
                Ok((key.to_vec(), decode(&record).ok_or_else(damaged)?))
            })
            .collect()
    }
}

/// A key's timers from their record.
fn decode(mut record: &[u8]) -> Option<Vec<KeyTimer>> {
    let mut timers = Vec::new();
    while !record.is_empty() {
        let time = i64::from_le_bytes(record.get(..8)?.try_into().ok()?);
        let id = u64::from_le_bytes(record.get(8..16)?.try_into().ok()?);
        let len = u32::from_le_bytes(record.get(16..20)?.try_into().ok()?);
        record = &record[20..];
        let name = if len == UNNAMED {
            None
        } else {
            let (name, rest) = record.split_at_checked(len as usize)?;
            record = rest;
            Some(std::str::from_utf8(name).ok()?.into())
        };
        timers.push(KeyTimer { time, id, name });
    }
    Some(timers)
}

fn damaged() -> DataFusionError {
    DataFusionError::Internal("a malformed timer in the state store".to_owned())
}
