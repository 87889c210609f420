//! Which keys' value state is in memory. With the disk backend the function's in-memory value
//! stores are a cache of resident keys: a key whose slot is handed out again (it arrives after
//! it was moved out) gets its entries back from the store, and after each call the least
//! recently used keys beyond the budget are moved out — their entries written to the store as
//! snapshots write them, their slots given back.
//!
//! A resident key's entries in memory are the ones that count. Reading a key back leaves the
//! store's copy where it is (removing it would cost a write per key read): moving the key out
//! again overwrites it, an entry that is gone by then is removed there, and a key that leaves
//! without state removes its copy.
//!
//! The keys arriving with a batch are read back together, in key order (`sorted_reads.rs`),
//! and the keys of a move out are written together (`write_set.rs`).
//!
//! List and map views are not moved: their items are found by key bytes (`items.rs`), cached
//! in memory while in use and in a keyspace of their own otherwise; a slot handed out is bound to its key's
//! bytes for them.
//!
//! A key's timers move with it (`timers.rs`): the timer service holds those of resident keys;
//! the timers a watermark makes due on disk bring their keys back to fire.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use udf_core::ptf::{StateStores, StoredItem, save_items};
use udf_core::{StateKind, StateSpec};

use super::items::ViewItems;
use super::layout::{StoreKey, leading, split_stamp};
use super::moved_out::{MovedOut, key_hash};
use super::sorted_reads::SortedReads;
use super::store::{DiskStore, ProcessorStore, StoreTotals};
use super::timers::{DiskTimers, DueOnDisk};
use super::victims::least_recently_used;
use super::write_set::WriteSet;
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
    /// An entry as its in-memory store saves it.
    saved: Vec<u8>,
    new_slots: Vec<u32>,
    /// The keys arriving that may have state on disk: their slots, and their key bytes back
    /// to back in `arriving_bytes`.
    arriving: Vec<(u32, std::ops::Range<usize>)>,
    arriving_bytes: Vec<u8>,
    /// The store keys of one entry of the arriving keys, back to back, and where each ends.
    wanted: Vec<u8>,
    wanted_ends: Vec<usize>,
    reads: SortedReads,
    writes: WriteSet,
    /// One key's bytes (reused).
    key_bytes: Vec<u8>,
    /// The keys moving out for the first time, for the filter (evict's scratch).
    moved_hashes: Vec<u64>,
    /// The slots moving out (evict's scratch).
    victims: Vec<u32>,
    /// The latest use of each slot (a count of arrivals), 0 for a slot not in use.
    last_use: Vec<u64>,
    /// Whether the store holds a copy of the value entries of the key in each slot (read
    /// back from it, and left there).
    on_disk: Vec<bool>,
    uses: u64,
    counts: ResidencyCounts,
    /// The timers of keys on disk.
    timers: DiskTimers,
    /// The keys that may have value entries or timers on disk: the others are not looked for.
    moved_out: MovedOut,
    /// The views' items (their cache is written back before the store is read directly).
    views: Arc<ViewItems>,
}

impl Residency {
    /// Keys of `keys` beyond `budget` go to `store` (a processor's part of `run`).
    pub fn new(
        run: Arc<DiskStore>,
        store: ProcessorStore,
        budget: u64,
        views: Arc<ViewItems>,
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
            new_slots: Vec::new(),
            arriving: Vec::new(),
            arriving_bytes: Vec::new(),
            wanted: Vec::new(),
            wanted_ends: Vec::new(),
            reads: SortedReads::default(),
            writes: WriteSet::default(),
            key_bytes: Vec::new(),
            moved_hashes: Vec::new(),
            victims: Vec::new(),
            last_use: Vec::new(),
            on_disk: Vec::new(),
            uses: 0,
            counts: ResidencyCounts::default(),
            timers: DiskTimers::default(),
            // Half the budget at most: past that, keys are looked for on disk.
            moved_out: MovedOut::with_limit(budget / 2),
            views,
        })
    }

    pub fn counts(&self) -> ResidencyCounts {
        self.counts
    }

    pub fn views(&self) -> &ViewItems {
        &self.views
    }

    /// What the processor's keyspaces read, wrote and hold: value entries and timers, and the
    /// view items if they have a keyspace of their own.
    pub fn store_totals(&self) -> StoreTotals {
        let (values, items) = (&self.store, self.views.store());
        match items.same_as(values) {
            true => values.totals(),
            false => values.totals() + items.totals(),
        }
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
        self.arriving.clear();
        self.arriving_bytes.clear();
        for &slot in &self.new_slots {
            let start = self.arriving_bytes.len();
            if !keys.append_key_bytes(slot, &mut self.arriving_bytes) {
                return Err(no_key(slot));
            }
            let bytes = &self.arriving_bytes[start..];
            stores.bind(slot, bytes);
            set(&mut self.on_disk, slot, false);
            self.arriving.push((slot, start..self.arriving_bytes.len()));
        }
        // Nothing is on disk before the first key moves out.
        if !self.arriving.is_empty() && !self.moved_out.is_empty() {
            self.load_arriving(stores, timers, entries, function)?;
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

    /// Reads the value entries and timers of the arriving keys back from the store.
    fn load_arriving(
        &mut self,
        stores: &mut dyn StateStores,
        timers: &mut TimerService,
        entries: &[StateSpec],
        function: &str,
    ) -> Result<()> {
        let bytes = &self.arriving_bytes;
        // In the order of their store keys: by length, then by their bytes.
        self.arriving.sort_unstable_by(|(_, a), (_, b)| {
            let (a, b) = (&bytes[a.clone()], &bytes[b.clone()]);
            (a.len(), leading(a))
                .cmp(&(b.len(), leading(b)))
                .then_with(|| a.cmp(b))
        });
        for (index, spec) in entries.iter().enumerate().filter(|(_, s)| is_value(s)) {
            let entry_number = entry_number(index)?;
            self.wanted.clear();
            self.wanted_ends.clear();
            for (_, key) in &self.arriving {
                self.wanted
                    .extend_from_slice(self.key.entry(entry_number, &bytes[key.clone()]));
                self.wanted_ends.push(self.wanted.len());
            }
            let mut start = 0;
            let wanted: Vec<&[u8]> = self
                .wanted_ends
                .iter()
                .map(|&end| {
                    let key = &self.wanted[start..end];
                    start = end;
                    key
                })
                .collect();
            let entry = stores.entry_mut(index).expect("a store per declared entry");
            let (arriving, on_disk) = (&self.arriving, &mut self.on_disk);
            let moved_out = &self.moved_out;
            let maybe = |at: usize| moved_out.may_contain(&bytes[arriving[at].1.clone()]);
            self.reads.read(&self.store, &wanted, maybe, |at, value| {
                let slot = arriving[at].0;
                let Some((_, saved)) = split_stamp(value) else {
                    return Err(entry_error(
                        function,
                        spec,
                        "is not readable on disk: its value is cut short",
                    ));
                };
                entry.restore(slot, saved).map_err(|e| {
                    entry_error(
                        function,
                        spec,
                        &format!("cannot be read back from disk: {e}"),
                    )
                })?;
                set(on_disk, slot, true);
                Ok(())
            })?;
        }
        for (slot, key) in &self.arriving {
            let mut loaded = self.on_disk.get(*slot as usize).copied().unwrap_or(false);
            let key = &bytes[key.clone()];
            if self.timers.held() > 0
                && self.moved_out.may_contain(key)
                && let Some(taken) = self.timers.take(&self.store, key)?
            {
                timers.restore_key(*slot, taken);
                loaded = true;
            }
            if loaded {
                self.counts.loads += 1;
            }
        }
        Ok(())
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
        let mut victims = std::mem::take(&mut self.victims);
        least_recently_used(
            &self.last_use,
            keys.len(),
            keys.len() - target,
            &mut victims,
        );
        for &slot in &victims {
            self.key_bytes.clear();
            if !keys.append_key_bytes(slot, &mut self.key_bytes) {
                return Err(no_key(slot));
            }
            let bytes = &self.key_bytes;
            let on_disk = self.on_disk.get(slot as usize).copied().unwrap_or(false);
            let came_back = on_disk;
            let mut written = false;
            for (index, spec) in entries.iter().enumerate().filter(|(_, s)| is_value(s)) {
                let entry = stores.entry(index).expect("a store per declared entry");
                let store_key = self.key.entry(entry_number(index)?, bytes);
                // Stamped with the time it moves out: no part of it was written later, so the
                // TTL filter, judging by this stamp, drops it only once all of it expired.
                let live = self
                    .writes
                    .put_with(store_key, |out| {
                        out.extend_from_slice(&now.to_le_bytes());
                        entry.save(slot, now, out)
                    })
                    .map_err(|e| entry_error(function, spec, &e.to_string()))?;
                if !live && on_disk {
                    self.writes.remove(store_key);
                }
                written |= live;
            }
            let moving = timers.take_key(slot);
            self.timers.move_out(&mut self.writes, bytes, &moving)?;
            // A key that came back with state from disk is in the filter already.
            if (written || !moving.is_empty()) && !came_back {
                self.moved_hashes.push(key_hash(bytes));
            }
            stores.release(slot);
            self.last_use[slot as usize] = 0;
            set(&mut self.on_disk, slot, false);
            self.counts.evictions += 1;
        }
        // Each of these touches a cold cache line: in loops of their own, the processor
        // waits for several at once.
        self.moved_out.insert_all(&self.moved_hashes);
        self.moved_hashes.clear();
        for &slot in &victims {
            keys.release(slot);
        }
        self.victims = victims;
        self.writes.commit(&self.store)?;
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

    /// `slot`, whose key has no state left, is about to be given back: the copy of its
    /// value entries the store may hold goes too.
    pub fn forget(&mut self, slot: u32, keys: &KeyTable, entries: &[StateSpec]) -> Result<()> {
        if let Some(used) = self.last_use.get_mut(slot as usize) {
            *used = 0;
        }
        if !self.on_disk.get(slot as usize).copied().unwrap_or(false) {
            return Ok(());
        }
        set(&mut self.on_disk, slot, false);
        self.key_bytes.clear();
        if !keys.append_key_bytes(slot, &mut self.key_bytes) {
            return Err(no_key(slot));
        }
        for (index, _) in entries.iter().enumerate().filter(|(_, s)| is_value(s)) {
            let store_key = self.key.entry(entry_number(index)?, &self.key_bytes);
            self.store.remove(store_key)?;
        }
        Ok(())
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
        self.views.write_back()?;
        let prefix = store_key.items(entry, key);
        let items = self
            .views
            .store()
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
        self.views.write_back()?;
        self.views.forget(entry, key);
        let prefix = self.key.items(entry, key).to_vec();
        let items = self.views.store();
        let doomed = items
            .scan(&prefix)
            .map(|found| found.map(|(store_key, _)| store_key))
            .collect::<Result<Vec<_>>>()?;
        doomed
            .iter()
            .try_for_each(|store_key| items.remove(store_key))
    }

    /// Every key with entry `index` (`spec`) in the store — the value entries of keys not
    /// resident (`resident` tells), the views of all keys — with its bytes and the entry as
    /// saved at `now`.
    pub fn stored(
        &self,
        index: usize,
        spec: &StateSpec,
        now: i64,
        resident: &dyn Fn(&[u8]) -> bool,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let entry = entry_number(index)?;
        if is_value(spec) {
            let mut keys = Vec::new();
            for item in self.store.scan(&StoreKey::entries_prefix(entry)) {
                let (store_key, value) = item?;
                let key = StoreKey::parse_partition_key(&store_key).ok_or_else(malformed)?;
                let (_, saved) = split_stamp(&value).ok_or_else(malformed)?;
                // A resident key's copy on disk is out of date.
                if !resident(key) {
                    keys.push((key.to_vec(), saved.to_vec()));
                }
            }
            return Ok(keys);
        }
        self.views.write_back()?;
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
        for found in self.views.store().scan(&StoreKey::items_prefix(entry)) {
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

fn no_key(slot: u32) -> DataFusionError {
    DataFusionError::Internal(format!("key slot {slot} is in use but has no key"))
}

/// Sets `flags[slot]`, growing `flags` as needed.
fn set(flags: &mut Vec<bool>, slot: u32, value: bool) {
    let slot = slot as usize;
    if slot >= flags.len() {
        if !value {
            return;
        }
        flags.resize(slot + 1, false);
    }
    flags[slot] = value;
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
