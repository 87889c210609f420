//! Which keys' value state is in memory. With the disk backend the function's in-memory value
//! stores are a cache of resident keys: a key whose slot is handed out again (it arrives after
//! it was moved out) gets its entries back from the store, and after each call the least
//! recently used keys beyond the budget are moved out — their entries written to the store as
//! snapshots write them, their slots given back. Each key's state is in one place: loading
//! removes the store's copy, moving out writes it.
//!
//! List and map views are not moved: their items live in the store all along (`items.rs`),
//! found by key bytes; a slot handed out is bound to its key's bytes for them.
//!
//! A key's timers move with it (`timers.rs`): the timer service holds those of resident keys;
//! the timers a watermark makes due on disk bring their keys back to fire.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use udf_core::ptf::{StateStores, StoredItem, save_items};
use udf_core::{StateKind, StateSpec};

use super::layout::{StoreKey, split_stamp, stamped};
use super::moved_out::MovedOut;
use super::store::{DiskStore, ProcessorStore};
use super::timers::{DiskTimers, DueOnDisk};
use crate::streaming::keys::KeyTable;
use crate::streaming::timers::{KeyTimer, TimerService};

/// What a resident key takes beyond its entries: its slot in the key table and the stores,
/// its key bytes and its place in the use list.
pub const BASE_BYTES_PER_KEY: usize = 256;

/// Every how many batches a few keys are measured, and how many.
const SAMPLE_EVERY: u64 = 16;
const SAMPLED_KEYS: usize = 8;

/// What moved between memory and the store (EXPLAIN ANALYZE shows it).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ResidencyCounts {
    /// Keys found resident when their rows came.
    pub hits: usize,
    /// Keys that came back and were read from the store.
    pub loads: usize,
    /// Keys moved out to the store.
    pub evictions: usize,
}

pub struct Residency {
    /// Keeps the run's store (and its directory) while this processor runs.
    run: Arc<DiskStore>,
    store: ProcessorStore,
    /// Memory for resident keys, in bytes.
    budget: u64,
    /// What one resident key is taken to need, from samples of the entries' saved size.
    bytes_per_key: f64,
    key: StoreKey,
    /// An entry as its in-memory store saves it, and as the disk store keeps it (stamped).
    saved: Vec<u8>,
    value: Vec<u8>,
    new_slots: Vec<u32>,
    /// The latest use of each slot (a count of arrivals), 0 for a slot not in use.
    last_use: Vec<u64>,
    uses: u64,
    counts: ResidencyCounts,
    /// The timers of keys on disk.
    timers: DiskTimers,
    /// The keys that may have value entries or timers on disk: the others are not looked for.
    moved_out: MovedOut,
}

impl Residency {
    /// Keys of `keys` beyond `budget` go to `store` (a processor's part of `run`).
    pub fn new(
        run: Arc<DiskStore>,
        store: ProcessorStore,
        budget: u64,
        keys: &mut KeyTable,
    ) -> Result<Self> {
        keys.log_taken_slots();
        Ok(Residency {
            store,
            run,
            budget,
            bytes_per_key: BASE_BYTES_PER_KEY as f64,
            key: StoreKey::default(),
            saved: Vec::new(),
            value: Vec::new(),
            new_slots: Vec::new(),
            last_use: Vec::new(),
            uses: 0,
            counts: ResidencyCounts::default(),
            timers: DiskTimers::default(),
            moved_out: MovedOut::default(),
        })
    }

    pub fn counts(&self) -> ResidencyCounts {
        self.counts
    }

    pub fn store(&self) -> &ProcessorStore {
        &self.store
    }

    /// After `used` slots were looked up for a batch: the keys handed new slots get their
    /// entries back from the store, and every slot used is noted as just used.
    pub fn arrive(
        &mut self,
        keys: &mut KeyTable,
        stores: &mut dyn StateStores,
        timers: &mut TimerService,
        entries: &[StateSpec],
        function: &str,
        used: &[u32],
    ) -> Result<()> {
        keys.take_new_slots(&mut self.new_slots);
        let fresh = self.new_slots.len();
        for index in 0..self.new_slots.len() {
            let slot = self.new_slots[index];
            let bytes = key_bytes(keys, slot)?;
            stores.bind(slot, &bytes);
            if !self.moved_out.may_contain(&bytes) {
                continue;
            }
            let mut loaded = self.load(slot, &bytes, stores, entries, function)?;
            if let Some(taken) = self.timers.take(&self.store, &bytes)? {
                timers.restore_key(slot, taken);
                loaded = true;
            }
            if loaded {
                self.counts.loads += 1;
            }
        }
        self.uses += 1;
        let mut distinct: usize = 0;
        for &slot in used {
            let slot = slot as usize;
            if slot >= self.last_use.len() {
                self.last_use.resize(slot + 1, 0);
            }
            if self.last_use[slot] != self.uses {
                self.last_use[slot] = self.uses;
                distinct += 1;
            }
        }
        self.counts.hits += distinct.saturating_sub(fresh);
        if self.uses % SAMPLE_EVERY == 1 {
            self.sample(stores, entries, used)?;
        }
        Ok(())
    }

    /// Keys that may stay in memory (beside the filter of the keys moved out).
    fn max_resident(&self) -> usize {
        let budget = self.budget.saturating_sub(self.moved_out.bytes());
        ((budget as f64 / self.bytes_per_key) as usize).max(1)
    }

    /// Measures a few of the keys just used (their entries as saved, twice that for their
    /// typed form in memory, plus the bookkeeping of a key) to follow what a key takes.
    fn sample(
        &mut self,
        stores: &dyn StateStores,
        entries: &[StateSpec],
        used: &[u32],
    ) -> Result<()> {
        let step = (used.len() / SAMPLED_KEYS).max(1);
        let (mut bytes, mut keys) = (0usize, 0usize);
        for &slot in used.iter().step_by(step).take(SAMPLED_KEYS) {
            for (entry, _) in stores.entries().zip(entries).filter(|(_, s)| is_value(s)) {
                self.saved.clear();
                // A failure shows when the key is moved out, with the entry's name.
                if entry.save(slot, i64::MIN, &mut self.saved).unwrap_or(false) {
                    bytes += self.saved.len();
                }
            }
            keys += 1;
        }
        if let Some(per_key) = (2 * bytes).checked_div(keys) {
            let measured = (BASE_BYTES_PER_KEY + per_key) as f64;
            self.bytes_per_key = 0.8 * self.bytes_per_key + 0.2 * measured;
        }
        Ok(())
    }

    /// Reads `key`'s entries into `slot` (and out of the store); whether it had any.
    fn load(
        &mut self,
        slot: u32,
        key: &[u8],
        stores: &mut dyn StateStores,
        entries: &[StateSpec],
        function: &str,
    ) -> Result<bool> {
        let mut found = false;
        for (index, spec) in entries.iter().enumerate().filter(|(_, s)| is_value(s)) {
            let store_key = self.key.entry(entry_number(index)?, key);
            let Some(value) = self.store.get(store_key)? else {
                continue;
            };
            let Some((_, saved)) = split_stamp(&value) else {
                return Err(entry_error(
                    function,
                    spec,
                    "is not readable on disk: its value is cut short",
                ));
            };
            let entry = stores.entry_mut(index).expect("a store per declared entry");
            entry.restore(slot, saved).map_err(|e| {
                entry_error(
                    function,
                    spec,
                    &format!("cannot be read back from disk: {e}"),
                )
            })?;
            self.store.remove(store_key)?;
            found = true;
        }
        Ok(found)
    }

    /// Moves the least recently used keys out until at most the budget's count of keys is
    /// resident (down to nine tenths, so this runs once in a while, not after every key).
    pub fn evict(
        &mut self,
        keys: &mut KeyTable,
        stores: &mut dyn StateStores,
        timers: &mut TimerService,
        entries: &[StateSpec],
        function: &str,
        now: i64,
    ) -> Result<()> {
        let max_resident = self.max_resident();
        if keys.len() <= max_resident {
            return Ok(());
        }
        let target = max_resident - max_resident / 10;
        let mut candidates: Vec<(u64, u32)> = self
            .last_use
            .iter()
            .enumerate()
            .filter(|&(_, &used)| used > 0)
            .map(|(slot, &used)| (used, slot as u32))
            .collect();
        let excess = (keys.len() - target).min(candidates.len());
        if excess < candidates.len() {
            candidates.select_nth_unstable(excess);
        }
        for &(_, slot) in &candidates[..excess] {
            let bytes = key_bytes(keys, slot)?;
            let mut written = false;
            for (index, spec) in entries.iter().enumerate().filter(|(_, s)| is_value(s)) {
                let entry = stores.entry(index).expect("a store per declared entry");
                self.saved.clear();
                let live = entry
                    .save(slot, now, &mut self.saved)
                    .map_err(|e| entry_error(function, spec, &e.to_string()))?;
                if live {
                    // Stamped with the time it moves out: no part of it was written later, so
                    // the TTL filter, judging by this stamp, drops it only once all of it expired.
                    stamped(now, &self.saved, &mut self.value);
                    let store_key = self.key.entry(entry_number(index)?, &bytes);
                    self.store.insert(store_key, &self.value)?;
                    written = true;
                }
            }
            let moving = timers.take_key(slot);
            self.timers.move_out(&self.store, &bytes, &moving)?;
            if written || !moving.is_empty() {
                self.moved_out.insert(&bytes);
            }
            stores.release(slot);
            keys.release(slot);
            self.last_use[slot as usize] = 0;
            self.counts.evictions += 1;
        }
        self.store_ttl_time(now);
        Ok(())
    }

    /// The keys of the timers on disk at or before `watermark` with ids below `limit` (at
    /// most `max`), for them to be read back and fire.
    pub fn due_timers(&mut self, watermark: i64, limit: u64, max: usize) -> Result<DueOnDisk> {
        self.timers.due(&self.store, watermark, limit, max)
    }

    /// Timers on disk.
    pub fn timers_held(&self) -> usize {
        self.timers.held()
    }

    /// Every key's timers on disk (for a snapshot).
    pub fn stored_timers(&self) -> Result<Vec<(Vec<u8>, Vec<KeyTimer>)>> {
        self.timers.all(&self.store)
    }

    /// A slot given back (its key has no state left).
    pub fn forget(&mut self, slot: u32) {
        if let Some(used) = self.last_use.get_mut(slot as usize) {
            *used = 0;
        }
    }

    /// Entry `index` (`spec`) of `key` as its store saves it: a value entry of a key that is
    /// not resident, or a view's items, live at `now`.
    pub fn saved(
        &self,
        index: usize,
        spec: &StateSpec,
        key: &[u8],
        now: i64,
    ) -> Result<Option<Vec<u8>>> {
        let entry = entry_number(index)?;
        let mut store_key = StoreKey::default();
        if is_value(spec) {
            return Ok(self
                .store
                .get(store_key.entry(entry, key))?
                .and_then(|value| split_stamp(&value).map(|(_, saved)| saved.to_vec())));
        }
        let prefix = store_key.items(entry, key);
        let items = self
            .store
            .scan(prefix)
            .map(|found| Ok(stored_item(&found?)?.1))
            .filter(|item| item.as_ref().map_or(true, |item| live(spec, item, now)))
            .collect::<Result<Vec<_>>>()?;
        let mut saved = Vec::new();
        Ok(save_items(&items, spec.kind == StateKind::Map, &mut saved).then_some(saved))
    }

    /// Removes entry `index` (`spec`) of `key`: a value entry of a key that is not resident,
    /// or a view's items.
    pub fn remove(&mut self, index: usize, spec: &StateSpec, key: &[u8]) -> Result<()> {
        let entry = entry_number(index)?;
        if is_value(spec) {
            let store_key = self.key.entry(entry, key);
            return self.store.remove(store_key);
        }
        let prefix = self.key.items(entry, key).to_vec();
        let doomed = self
            .store
            .scan(&prefix)
            .map(|found| found.map(|(store_key, _)| store_key))
            .collect::<Result<Vec<_>>>()?;
        doomed
            .iter()
            .try_for_each(|store_key| self.store.remove(store_key))
    }

    /// Every key with entry `index` (`spec`) in the store — the value entries of keys not
    /// resident, the views of all keys — with its bytes and the entry as saved at `now`.
    pub fn stored(
        &self,
        index: usize,
        spec: &StateSpec,
        now: i64,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let entry = entry_number(index)?;
        if is_value(spec) {
            return self
                .store
                .scan(&StoreKey::entries_prefix(entry))
                .map(|item| {
                    let (store_key, value) = item?;
                    let key = StoreKey::parse_partition_key(&store_key).ok_or_else(malformed)?;
                    let (_, saved) = split_stamp(&value).ok_or_else(malformed)?;
                    Ok((key.to_vec(), saved.to_vec()))
                })
                .collect();
        }
        // One key's items are one run of the scan.
        let map = spec.kind == StateKind::Map;
        let mut keys: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut current: Option<(Vec<u8>, Vec<StoredItem>)> = None;
        let mut flush = |current: Option<(Vec<u8>, Vec<StoredItem>)>| {
            if let Some((key, items)) = current {
                let mut saved = Vec::new();
                if save_items(&items, map, &mut saved) {
                    keys.push((key, saved));
                }
            }
        };
        for found in self.store.scan(&StoreKey::items_prefix(entry)) {
            let (key, item) = stored_item(&found?)?;
            if current.as_ref().is_none_or(|(k, _)| *k != key) {
                flush(current.take());
                current = Some((key, Vec::new()));
            }
            if live(spec, &item, now) {
                current.as_mut().expect("set above").1.push(item);
            }
        }
        flush(current);
        Ok(keys)
    }

    fn store_ttl_time(&self, now: i64) {
        self.run.ttl().advance(now);
    }
}

/// Whether an entry is value state (moved with its key), not a view (kept item by item).
fn is_value(spec: &StateSpec) -> bool {
    spec.kind == StateKind::Value
}

/// Whether `item` of entry `spec` is live at `now`.
fn live(spec: &StateSpec, item: &StoredItem, now: i64) -> bool {
    let ttl = spec
        .ttl
        .map(|ttl| i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
    !matches!(ttl, Some(ttl) if item.written.saturating_add(ttl) <= now)
}

/// A view item's partition key and the item itself.
fn stored_item((store_key, value): &(fjall::Slice, fjall::Slice)) -> Result<(Vec<u8>, StoredItem)> {
    let (key, item) = StoreKey::parse_item(store_key).ok_or_else(malformed)?;
    let (written, payload) = split_stamp(value).ok_or_else(malformed)?;
    Ok((
        key.to_vec(),
        StoredItem {
            item: item.to_vec(),
            written,
            value: payload.to_vec(),
        },
    ))
}

fn malformed() -> DataFusionError {
    DataFusionError::Internal("a malformed entry in the state store".to_owned())
}

fn key_bytes(keys: &KeyTable, slot: u32) -> Result<Vec<u8>> {
    keys.key_bytes(slot).ok_or_else(|| {
        DataFusionError::Internal(format!("key slot {slot} is in use but has no key"))
    })
}

fn entry_number(index: usize) -> Result<u16> {
    u16::try_from(index).map_err(|_| {
        DataFusionError::Execution(format!(
            "a function with more than {} state entries cannot keep them on disk",
            u16::MAX
        ))
    })
}

fn entry_error(function: &str, spec: &StateSpec, what: &str) -> DataFusionError {
    DataFusionError::Execution(format!(
        "state entry `{}` of `{function}` {what}",
        spec.name
    ))
}
