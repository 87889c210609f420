//! The keyed-state unit of one processor: everything it keeps for its keys, behind one type —
//! the key table, the function's state stores (values, list and map views, their TTL stamps),
//! the timers, the ORDER BY rows waiting for the watermark, and the watermarks received from
//! each input partition.
//!
//! Inside, keys have small reusable slots (the function's stores are indexed by them, so a
//! call costs no hashing beyond the key lookup). Outside — in the get/put/clear methods and in
//! snapshots — a key is its values, or their bytes (`KeyTable::key_bytes`), so a snapshot
//! taken in one run restores in another (rule 33 of docs/semantics.md).

// Snapshots serve checkpoints (a processor saves its unit at a barrier and a restored run
// takes it back) and the processor tests.
pub(crate) mod packed;
mod snapshot;

pub use snapshot::{KeepKeys, RestorePart};

pub mod disk;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType as ArrowType;
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err};
use serde::Serialize;
use serde::de::DeserializeOwned;
use udf_core::ptf::{EntryStore, StateStores};
use udf_core::{StateKind, StateSpec};

use disk::residency::Residency;

use super::keys::KeyTable;
use super::sort_buffer::SortBuffer;
use super::timers::TimerService;
use super::watermarks::SourceWatermarks;

pub struct KeyedState {
    /// The function, for error messages.
    function: String,
    key_types: Vec<ArrowType>,
    keys: KeyTable,
    /// The declared state entries, in the stores' order.
    entries: Vec<StateSpec>,
    stores: Box<dyn StateStores>,
    timers: TimerService,
    /// The ORDER BY buffer of each table argument that has ORDER BY.
    sorters: Vec<Option<SortBuffer>>,
    watermarks: SourceWatermarks,
    /// The processing time of the latest batch.
    now: i64,
    /// With the disk backend: which keys are in memory, and the store holding the others.
    disk: Option<Residency>,
}

impl KeyedState {
    /// An empty unit for keys of `key_types`, with `stores` for the entries `entries`, an ORDER
    /// BY buffer per table argument with ORDER BY, and `sources` input partitions.
    pub fn new(
        function: &str,
        key_types: &[ArrowType],
        entries: Vec<StateSpec>,
        stores: Box<dyn StateStores>,
        sorters: Vec<Option<SortBuffer>>,
        sources: usize,
    ) -> Result<Self> {
        Ok(KeyedState {
            function: function.to_owned(),
            key_types: key_types.to_vec(),
            keys: KeyTable::new(key_types)?,
            entries,
            stores,
            timers: TimerService::default(),
            sorters,
            watermarks: SourceWatermarks::new(sources),
            now: 0,
            disk: None,
        })
    }

    /// Keeps the state of keys beyond the budget in the run's disk store (see
    /// `disk/residency.rs`).
    pub fn with_disk(
        mut self,
        run: std::sync::Arc<disk::store::DiskStore>,
        store: disk::store::ProcessorStore,
        budget: u64,
        views: std::sync::Arc<disk::items::ViewItems>,
    ) -> Result<Self> {
        self.disk = Some(Residency::new(run, store, budget, views, &mut self.keys)?);
        Ok(self)
    }

    /// The slot of each row's key into `out`, assigning slots to new keys (and, with the
    /// disk backend, reading back the state of keys that were moved out).
    pub fn slots(&mut self, keys: &[ArrayRef], rows: usize, out: &mut Vec<u32>) -> Result<()> {
        self.keys.slots(keys, rows, out)?;
        self.arrive(out)
    }

    /// With the disk backend: the keys just handed slots get their state back, and `used`
    /// are noted as just used.
    fn arrive(&mut self, used: &[u32]) -> Result<()> {
        match &mut self.disk {
            Some(disk) => disk.arrive(
                &mut self.keys,
                self.stores.as_mut(),
                &mut self.timers,
                &self.entries,
                &self.function,
                used,
            ),
            None => Ok(()),
        }
    }

    /// After a call: with the disk backend, moves the least recently used keys beyond the
    /// budget out of memory.
    pub fn settle(&mut self) -> Result<()> {
        match &mut self.disk {
            Some(disk) => disk.evict(
                &mut self.keys,
                self.stores.as_mut(),
                &mut self.timers,
                &self.entries,
                &self.function,
                self.now,
            ),
            None => Ok(()),
        }
    }

    /// With the disk backend: reads back the keys of the timers on disk at or before
    /// `watermark` with ids below `limit` — at most `max` of them — so that they fire with
    /// those in memory. Gives the (time, id) up to which timers may fire when only part of
    /// them came back.
    pub fn bring_back_due_timers(
        &mut self,
        watermark: i64,
        limit: u64,
        max: usize,
    ) -> Result<Option<(i64, u64)>> {
        let Some(disk) = &mut self.disk else {
            return Ok(None);
        };
        let due = disk.due_timers(watermark, limit, max)?;
        // All at once: their state is read back together, in key order.
        let slots = due
            .keys
            .iter()
            .map(|key| self.keys.slot_of_bytes(key))
            .collect::<Result<Vec<u32>>>()?;
        self.arrive(&slots)?;
        Ok(due.bound)
    }

    /// What the disk backend moved, and its store, if the unit has one.
    pub fn disk(&self) -> Option<&Residency> {
        self.disk.as_ref()
    }

    /// The slot of the key whose bytes are `bytes`, assigned (and its state read back from
    /// disk) if it has none.
    pub(super) fn resident_slot(&mut self, bytes: &[u8]) -> Result<u32> {
        let slot = self.keys.slot_of_bytes(bytes)?;
        self.arrive(&[slot])?;
        Ok(slot)
    }

    /// What a call of the function works on: its stores and the timers.
    pub fn call_parts(&mut self) -> (&mut dyn StateStores, &mut TimerService) {
        (self.stores.as_mut(), &mut self.timers)
    }

    pub fn timers_mut(&mut self) -> &mut TimerService {
        &mut self.timers
    }

    /// Table argument `table`'s ORDER BY buffer.
    pub fn sorter_mut(&mut self, table: usize) -> Option<&mut SortBuffer> {
        self.sorters.get_mut(table)?.as_mut()
    }

    /// Whether table argument `table` has ORDER BY.
    pub fn is_ordered(&self, table: usize) -> bool {
        self.sorters.get(table).is_some_and(Option::is_some)
    }

    pub fn watermarks(&self) -> &SourceWatermarks {
        &self.watermarks
    }

    pub fn watermarks_mut(&mut self) -> &mut SourceWatermarks {
        &mut self.watermarks
    }

    /// The processing time of the latest batch (state TTL is measured on it).
    pub fn now(&self) -> i64 {
        self.now
    }

    pub fn set_now(&mut self, now: i64) {
        self.now = now;
    }

    /// Gives back the slots of `released` keys left without state and timers. A slot listed
    /// twice is given back once (nothing takes a slot between two entries of the list), and the
    /// order slots come back in shows nowhere: timers fire in registration order.
    pub fn release(&mut self, released: &mut Vec<u32>) -> Result<()> {
        let mut outcome = Ok(());
        for &slot in released.iter() {
            if self.stores.is_absent(slot) && !self.timers.has_timers(slot) {
                if let Some(disk) = &mut self.disk
                    && outcome.is_ok()
                {
                    outcome = disk.forget(slot, &self.keys, &self.entries);
                }
                self.stores.release(slot);
                self.keys.release(slot);
            }
        }
        released.clear();
        outcome
    }

    /// The key columns of `slots` (keys that hold state or timers).
    pub fn key_arrays(&self, slots: &[u32]) -> Result<Vec<ArrayRef>> {
        self.keys.key_arrays(slots, &self.key_types)
    }

    /// State entries held, over every key.
    pub fn entries_held(&self) -> usize {
        self.stores.len()
    }

    /// Keys holding a slot.
    pub fn keys_held(&self) -> usize {
        self.keys.len()
    }

    /// Timers registered, in memory and on disk.
    pub fn timers_held(&self) -> usize {
        self.timers.len() + self.disk.as_ref().map_or(0, Residency::timers_held)
    }

    pub fn rows_waiting(&self) -> usize {
        self.sorters.iter().flatten().map(SortBuffer::len).sum()
    }
}

/// Entries by key, for what runs outside the function's calls (see `snapshot`).
#[cfg_attr(not(test), allow(dead_code))]
impl KeyedState {
    /// Entry `name`'s position and spec.
    fn entry(&self, name: &str, kind: StateKind) -> Result<usize> {
        let Some(index) = self.entries.iter().position(|e| e.name == name) else {
            let names: Vec<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
            return exec_err!(
                "`{}` has no state entry `{name}` (its entries: {})",
                self.function,
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            );
        };
        if self.entries[index].kind != kind {
            return exec_err!(
                "state entry `{name}` of `{}` is a {:?} entry, not a {kind:?} entry",
                self.function,
                self.entries[index].kind
            );
        }
        Ok(index)
    }

    fn store(&self, index: usize) -> &dyn EntryStore {
        self.stores
            .entry(index)
            .expect("the stores have every declared entry")
    }

    /// The bytes of `key` (one value per PARTITION BY column).
    fn key_bytes_of(&self, key: &[ScalarValue]) -> Result<Vec<u8>> {
        if key.len() != self.key_types.len() {
            return exec_err!(
                "`{}` is partitioned by {} columns; a key of {} values was given",
                self.function,
                self.key_types.len(),
                key.len()
            );
        }
        let arrays = key
            .iter()
            .zip(&self.key_types)
            .map(|(value, data_type)| value.cast_to(data_type)?.to_array())
            .collect::<Result<Vec<_>>>()?;
        Ok(self.keys.encode(&arrays, 1)?.swap_remove(0))
    }

    /// `entry`'s saved bytes for `key`, if it has a live entry.
    fn saved(&self, index: usize, key: &[ScalarValue]) -> Result<Option<Vec<u8>>> {
        let bytes = self.key_bytes_of(key)?;
        let spec = &self.entries[index];
        let slot = match (self.keys.find_bytes(&bytes), &self.disk) {
            // Views are in the store, resident or not.
            (Some(slot), Some(_)) if spec.kind == StateKind::Value => slot,
            (_, Some(disk)) => return disk.saved(index, spec, &bytes, self.now),
            (Some(slot), None) => slot,
            (None, None) => return Ok(None),
        };
        let mut bytes = Vec::new();
        let live = self
            .store(index)
            .save(slot, self.now, &mut bytes)
            .map_err(|e| self.entry_error(index, e))?;
        Ok(live.then_some(bytes))
    }

    fn entry_error(&self, index: usize, error: udf_core::Error) -> DataFusionError {
        DataFusionError::Execution(format!(
            "state entry `{}` of `{}`: {error}",
            self.entries[index].name, self.function
        ))
    }

    /// The value of value-state entry `name` for `key`, if it has one.
    pub fn value<T: DeserializeOwned>(&self, name: &str, key: &[ScalarValue]) -> Result<Option<T>> {
        let index = self.entry(name, StateKind::Value)?;
        self.saved(index, key)?
            .map(|bytes| {
                snapshot::decode_value::<T>(&bytes).map_err(|e| self.entry_error(index, e))
            })
            .transpose()
    }

    /// Sets value-state entry `name` of `key` (written now, for TTL).
    pub fn put_value<T: Serialize>(
        &mut self,
        name: &str,
        key: &[ScalarValue],
        value: &T,
    ) -> Result<()> {
        let index = self.entry(name, StateKind::Value)?;
        let bytes =
            snapshot::encode_value(self.now, value).map_err(|e| self.entry_error(index, e))?;
        let slot = self.resident_slot(&self.key_bytes_of(key)?)?;
        let outcome = self
            .stores
            .entry_mut(index)
            .expect("the stores have every declared entry")
            .restore(slot, &bytes);
        outcome.map_err(|e| self.entry_error(index, e))
    }

    /// The live elements of list entry `name` for `key`, oldest first.
    pub fn list<T: DeserializeOwned>(&self, name: &str, key: &[ScalarValue]) -> Result<Vec<T>> {
        let index = self.entry(name, StateKind::List)?;
        match self.saved(index, key)? {
            Some(bytes) => snapshot::decode_list(&bytes).map_err(|e| self.entry_error(index, e)),
            None => Ok(Vec::new()),
        }
    }

    /// The live entries of map entry `name` for `key`, in no particular order.
    pub fn map<K: DeserializeOwned, V: DeserializeOwned>(
        &self,
        name: &str,
        key: &[ScalarValue],
    ) -> Result<Vec<(K, V)>> {
        let index = self.entry(name, StateKind::Map)?;
        match self.saved(index, key)? {
            Some(bytes) => snapshot::decode_map(&bytes).map_err(|e| self.entry_error(index, e)),
            None => Ok(Vec::new()),
        }
    }

    /// Clears entry `name` of `key` (every entry of the key with `None`), and gives the key's
    /// slot back if nothing is left.
    pub fn clear(&mut self, name: Option<&str>, key: &[ScalarValue]) -> Result<()> {
        let index = match name {
            Some(name) => {
                let kind = self
                    .entries
                    .iter()
                    .find(|e| e.name == name)
                    .map_or(StateKind::Value, |e| e.kind);
                Some(self.entry(name, kind)?)
            }
            None => None,
        };
        let bytes = self.key_bytes_of(key)?;
        let Some(slot) = self.keys.find_bytes(&bytes) else {
            if let Some(disk) = &mut self.disk {
                for (entry, spec) in self.entries.iter().enumerate() {
                    if index.is_none_or(|index| index == entry) {
                        disk.remove(entry, spec, &bytes)?;
                    }
                }
            }
            return Ok(());
        };
        let cleared = match index {
            Some(index) => self
                .stores
                .entry_mut(index)
                .expect("the stores have every declared entry")
                .clear(slot)
                .map_err(|e| self.entry_error(index, e)),
            None => self.stores.clear(slot).map_err(|e| {
                DataFusionError::Execution(format!("state of `{}`: {e}", self.function))
            }),
        };
        cleared?;
        self.release(&mut vec![slot])
    }
}
