//! The in-memory backend: one typed entry per key slot.

use super::stores::{EntryStore, decode, encode};
use super::ttl::{Stamped, Ttl};
use super::views::{KeyedView, SavedView};
use super::{StateValue, ValueStates, ViewStates};
use crate::Error;
use crate::spec::StateSpec;

/// Value state: read before each call, written after it only if it changed (rule 22 of
/// docs/semantics.md).
///
/// Kept by column, so that a call touches as little memory as it can: each slot's value (the
/// initial value where the slot holds no entry), whether it holds one, and — only with a TTL —
/// when it was last written.
pub struct ValueStore<T> {
    /// How entries are saved: fixed where the store is made, so the serde bounds are checked
    /// there alone (one error for a state type that lacks them).
    codec: ValueCodec<T>,
    values: Vec<T>,
    present: Vec<bool>,
    /// Each slot's last write (processing time, ms), with a TTL; empty without one.
    written: Vec<i64>,
    initial: T,
    ttl: Ttl,
    live: usize,
}

/// Saving and restoring one value entry with its stamp.
struct ValueCodec<T> {
    save: fn(&Stamped<&T>, &mut Vec<u8>) -> Result<(), Error>,
    restore: fn(&[u8]) -> Result<Stamped<T>, Error>,
}

impl<T: StateValue> ValueStore<T> {
    pub fn new(spec: &StateSpec) -> Self {
        ValueStore {
            codec: ValueCodec {
                save: |entry, out| encode(entry, out),
                restore: decode,
            },
            values: Vec::new(),
            present: Vec::new(),
            written: Vec::new(),
            initial: T::initial(spec.data_type.as_ref()),
            ttl: Ttl::of(spec),
            live: 0,
        }
    }
}

// Only what the accessors need, so a state type missing a trait is reported once, at the
// constructor.
impl<T: Clone + PartialEq> ValueStore<T> {
    #[inline]
    pub fn load(&mut self, key: usize, now: i64) -> T {
        let Some(value) = self.values.get(key) else {
            return self.initial.clone();
        };
        if self.ttl.0.is_some() && self.present[key] && self.ttl.expired(self.written[key], now) {
            self.remove(key);
            return self.initial.clone();
        }
        value.clone()
    }

    #[inline]
    pub fn store(&mut self, key: usize, value: T, now: i64) -> bool {
        if self.values.len() <= key {
            if value == self.initial {
                return true;
            }
            self.grow(key);
        }
        // An absent slot holds the initial value: equal means unchanged either way.
        if self.values[key] == value {
            return !self.present[key];
        }
        if self.present[key] {
            // A changed entry: written back, unless it went back to the initial value.
            if value == self.initial {
                self.remove(key);
                return true;
            }
        } else {
            // A new entry (the slot held the initial value, so `value` is another).
            self.present[key] = true;
            self.live += 1;
        }
        self.values[key] = value;
        if self.ttl.0.is_some() {
            self.written[key] = now;
        }
        false
    }

    /// Room for slot `key`.
    #[cold]
    fn grow(&mut self, key: usize) {
        let len = (key + 1).max(self.values.len() * 2);
        self.values.resize(len, self.initial.clone());
        self.present.resize(len, false);
        if self.ttl.0.is_some() {
            self.written.resize(len, 0);
        }
    }

    fn remove(&mut self, key: usize) {
        if self.present[key] {
            self.present[key] = false;
            self.live -= 1;
        }
        self.values[key] = self.initial.clone();
    }

    pub fn clear(&mut self, key: usize) {
        if key < self.values.len() {
            self.remove(key);
        }
    }

    pub fn is_absent(&self, key: usize) -> bool {
        !self.present.get(key).copied().unwrap_or(false)
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
}

impl<T: Clone + PartialEq + Send + 'static> EntryStore for ValueStore<T> {
    fn is_absent(&self, slot: u32) -> bool {
        ValueStore::is_absent(self, slot as usize)
    }

    fn clear(&mut self, slot: u32) {
        ValueStore::clear(self, slot as usize)
    }

    fn len(&self) -> usize {
        self.live
    }

    fn occupied(&self) -> Vec<u32> {
        occupied(self.present.iter().copied())
    }

    fn save(&self, slot: u32, now: i64, out: &mut Vec<u8>) -> Result<bool, Error> {
        let key = slot as usize;
        if self.is_absent(key) {
            return Ok(false);
        }
        let written = self.written.get(key).copied().unwrap_or(0);
        if self.ttl.expired(written, now) {
            return Ok(false);
        }
        let entry = Stamped {
            written,
            value: &self.values[key],
        };
        (self.codec.save)(&entry, out)?;
        Ok(true)
    }

    fn restore(&mut self, slot: u32, bytes: &[u8]) -> Result<(), Error> {
        let entry = (self.codec.restore)(bytes)?;
        let key = slot as usize;
        if self.values.len() <= key {
            self.grow(key);
        }
        self.values[key] = entry.value;
        if self.ttl.0.is_some() {
            self.written[key] = entry.written;
        }
        if !self.present[key] {
            self.present[key] = true;
            self.live += 1;
        }
        Ok(())
    }
}

/// The positions where `present` is true.
fn occupied(present: impl Iterator<Item = bool>) -> Vec<u32> {
    present
        .enumerate()
        .filter_map(|(slot, present)| present.then_some(slot as u32))
        .collect()
}

impl<T: Clone + PartialEq + Send + 'static> ValueStates<T> for ValueStore<T> {
    fn load(&mut self, key: usize, now: i64) -> T {
        ValueStore::load(self, key, now)
    }

    fn store(&mut self, key: usize, value: T, now: i64) -> bool {
        ValueStore::store(self, key, value, now)
    }
}

/// `SavedView::save` of a view type (with the TTL and the time to check entries at).
type SaveView<V> = fn(&V, Option<i64>, i64, &mut Vec<u8>) -> Result<bool, Error>;

/// One view per key slot; an empty view is an absent entry.
pub struct ViewStore<V> {
    views: Vec<V>,
    ttl: Ttl,
    /// How a view's entries are saved (see `ValueStore::codec`).
    save: SaveView<V>,
    restore: fn(&mut V, &[u8]) -> Result<(), Error>,
}

impl<V: SavedView> ViewStore<V> {
    pub fn new(spec: &StateSpec) -> Self {
        ViewStore {
            views: Vec::new(),
            ttl: Ttl::of(spec),
            save: V::save,
            restore: V::restore,
        }
    }
}

impl<V: KeyedView> ViewStore<V> {
    #[inline]
    pub fn view(&mut self, key: usize, now: i64) -> &mut V {
        if self.views.len() <= key {
            self.views.resize_with(key + 1, V::default);
        }
        let view = &mut self.views[key];
        view.prepare(self.ttl.0, now);
        view
    }

    #[inline]
    pub fn finish(&mut self, key: usize) -> bool {
        match self.views.get_mut(key) {
            Some(view) => {
                view.finish();
                view.is_absent()
            }
            None => true,
        }
    }

    pub fn clear(&mut self, key: usize) {
        if let Some(view) = self.views.get_mut(key) {
            view.clear_all();
        }
    }

    pub fn is_absent(&self, key: usize) -> bool {
        self.views.get(key).is_none_or(KeyedView::is_absent)
    }

    pub fn len(&self) -> usize {
        self.views.iter().filter(|v| !v.is_absent()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.views.iter().all(KeyedView::is_absent)
    }
}

impl<V: KeyedView + Send + 'static> EntryStore for ViewStore<V> {
    fn is_absent(&self, slot: u32) -> bool {
        ViewStore::is_absent(self, slot as usize)
    }

    fn clear(&mut self, slot: u32) {
        ViewStore::clear(self, slot as usize)
    }

    fn len(&self) -> usize {
        ViewStore::len(self)
    }

    fn occupied(&self) -> Vec<u32> {
        occupied(self.views.iter().map(|view| !view.is_absent()))
    }

    fn save(&self, slot: u32, now: i64, out: &mut Vec<u8>) -> Result<bool, Error> {
        match self.views.get(slot as usize) {
            Some(view) if !view.is_absent() => (self.save)(view, self.ttl.0, now, out),
            _ => Ok(false),
        }
    }

    fn restore(&mut self, slot: u32, bytes: &[u8]) -> Result<(), Error> {
        let key = slot as usize;
        if self.views.len() <= key {
            self.views.resize_with(key + 1, V::default);
        }
        (self.restore)(&mut self.views[key], bytes)
    }
}

impl<V: KeyedView + Send + 'static> ViewStates<V> for ViewStore<V> {
    fn view(&mut self, key: usize, now: i64) -> &mut V {
        ViewStore::view(self, key, now)
    }

    fn finish(&mut self, key: usize) -> bool {
        ViewStore::finish(self, key)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ptf::state::{ListView, MapView};
    use crate::spec::StateKind;

    fn spec(ttl: Option<u64>) -> StateSpec {
        StateSpec {
            name: "s".into(),
            kind: StateKind::Value,
            rust_type: "i64".into(),
            data_type: None,
            ttl: ttl.map(Duration::from_millis),
        }
    }

    #[test]
    fn value_state_writes_only_changes_and_drops_the_initial_value() {
        let mut store = ValueStore::<i64>::new(&spec(Some(100)));
        assert_eq!(store.load(3, 0), 0);
        store.store(3, 0, 0);
        assert!(store.is_absent(3), "the initial value is stored as absent");
        store.store(3, 5, 10);
        assert_eq!(store.len(), 1);
        // Unchanged at 50: not written, so it still expires 100 ms after 10.
        let value = store.load(3, 50);
        store.store(3, value, 50);
        assert_eq!(store.load(3, 109), 5);
        assert_eq!(store.load(3, 110), 0, "expired at written + ttl");
        assert!(store.is_absent(3));
        store.store(3, 7, 120);
        store.store(3, 0, 130);
        assert!(
            store.is_absent(3),
            "writing the initial value removes the entry"
        );
        assert_eq!(store.len(), 0);
    }

    #[test]
    fn list_and_map_entries_expire_one_by_one() {
        let mut lists = ViewStore::<ListView<i32>>::new(&spec(Some(100)));
        lists.view(0, 0).add(1);
        lists.view(0, 60).add(2);
        assert_eq!(lists.view(0, 99).to_vec(), [1, 2]);
        assert_eq!(lists.view(0, 100).to_vec(), [2]);
        lists.finish(0);
        assert!(!lists.is_absent(0));
        assert_eq!(lists.view(0, 160).len(), 0);
        lists.finish(0);
        assert!(lists.is_absent(0));

        let mut maps = ViewStore::<MapView<String, i32>>::new(&spec(Some(100)));
        maps.view(1, 0).put("a".into(), 1);
        maps.view(1, 50).put("b".into(), 2);
        let view = maps.view(1, 120);
        assert_eq!(view.get("a"), None);
        assert_eq!(view.get("b"), Some(&2));
        assert_eq!(
            view.put("a".into(), 3),
            None,
            "an expired value is not returned"
        );
        assert_eq!(view.len(), 2);
    }
}
