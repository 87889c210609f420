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
    /// With a TTL: the value of the slot being called, as it was before the call.
    before: T,
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
            before: T::initial(spec.data_type.as_ref()),
            ttl: Ttl::of(spec),
            live: 0,
        }
    }
}

// Only what the accessors need, so a state type missing a trait is reported once, at the
// constructor.
impl<T: Clone + PartialEq> ValueStore<T> {
    /// The value of `key` for one call, changed in place: its entry, or the initial value.
    /// [`finish`](Self::finish) after the call settles what it became.
    #[inline]
    pub fn value(&mut self, key: usize, now: i64) -> &mut T {
        if key >= self.values.len() {
            self.grow(key);
        }
        if self.ttl.0.is_some() {
            self.open_with_ttl(key, now);
        }
        &mut self.values[key]
    }

    /// With a TTL: an expired entry is gone before the call, and the value before it is kept
    /// (an unchanged value is not written, so its life is not extended).
    #[inline(never)]
    fn open_with_ttl(&mut self, key: usize, now: i64) {
        if self.present[key] && self.ttl.expired(self.written[key], now) {
            self.remove(key);
        }
        self.before.clone_from(&self.values[key]);
    }

    /// After the call: a value equal to the initial one is absent; a changed one is written
    /// (stamped, with a TTL). Whether `key` has no entry afterwards.
    #[inline]
    pub fn finish(&mut self, key: usize, now: i64) -> bool {
        if self.values[key] == self.initial {
            self.mark_absent(key);
            return true;
        }
        if !self.present[key] {
            self.present[key] = true;
            self.live += 1;
        } else if self.ttl.0.is_none() || self.values[key] == self.before {
            return false;
        }
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
        self.mark_absent(key);
        self.values[key] = self.initial.clone();
    }

    /// The slot holds no entry (its value is, or is about to be, the initial one).
    fn mark_absent(&mut self, key: usize) {
        if self.present[key] {
            self.present[key] = false;
            self.live -= 1;
        }
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

    fn clear(&mut self, slot: u32) -> Result<(), Error> {
        ValueStore::clear(self, slot as usize);
        Ok(())
    }

    /// Entries are kept by slot: there is nothing to bind.
    fn bind(&mut self, _slot: u32, _key: &[u8]) {}

    fn release(&mut self, slot: u32) {
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
    fn value(&mut self, key: usize, now: i64) -> &mut T {
        ValueStore::value(self, key, now)
    }

    fn finish(&mut self, key: usize, now: i64) -> bool {
        ValueStore::finish(self, key, now)
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

    fn clear(&mut self, slot: u32) -> Result<(), Error> {
        ViewStore::clear(self, slot as usize);
        Ok(())
    }

    /// Views are kept by slot: there is nothing to bind.
    fn bind(&mut self, _slot: u32, _key: &[u8]) {}

    fn release(&mut self, slot: u32) {
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

    fn finish(&mut self, key: usize) -> Result<bool, Error> {
        Ok(ViewStore::finish(self, key))
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
        // One call at `now`: the value it saw, then what it left.
        let call = |store: &mut ValueStore<i64>, now: i64, set: Option<i64>| {
            let value = store.value(3, now);
            let seen = *value;
            if let Some(set) = set {
                *value = set;
            }
            store.finish(3, now);
            seen
        };
        assert_eq!(call(&mut store, 0, None), 0);
        assert!(store.is_absent(3), "the initial value is stored as absent");
        call(&mut store, 10, Some(5));
        assert_eq!(store.len(), 1);
        // Unchanged at 50: not written, so it still expires 100 ms after 10.
        assert_eq!(call(&mut store, 50, Some(5)), 5);
        assert_eq!(call(&mut store, 109, None), 5);
        assert_eq!(call(&mut store, 110, None), 0, "expired at written + ttl");
        assert!(store.is_absent(3));
        assert_eq!(store.len(), 0);
        call(&mut store, 120, Some(7));
        assert_eq!(store.len(), 1);
        call(&mut store, 130, Some(0));
        assert!(
            store.is_absent(3),
            "writing the initial value removes the entry"
        );
        assert_eq!(store.len(), 0);
        // A changed value is stamped: alive until 140 + 100.
        call(&mut store, 140, Some(8));
        call(&mut store, 200, Some(9));
        assert_eq!(call(&mut store, 299, None), 9, "written again at 200");
        assert_eq!(call(&mut store, 300, None), 0);
    }

    #[test]
    fn value_state_without_ttl_changes_in_place() {
        let mut store = ValueStore::<String>::new(&spec(None));
        store.value(0, 0).push_str("ab");
        assert!(!store.finish(0, 0));
        store.value(0, 0).push('c');
        store.finish(0, 0);
        assert_eq!(store.value(0, 0), "abc");
        store.value(0, 0).clear();
        assert!(store.finish(0, 0), "back to the initial value: absent");
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
        view.put("a".into(), 3);
        assert_eq!(view.get("a"), Some(&3), "written again at 120");
        assert_eq!(view.len(), 2);
    }
}
