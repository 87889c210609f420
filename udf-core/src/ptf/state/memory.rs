//! The in-memory backend: one typed entry per key slot.

use super::ttl::{Stamped, Ttl};
use super::views::KeyedView;
use super::{StateValue, ValueStates, ViewStates};
use crate::spec::StateSpec;

/// Value state: read before each call, written after it only if it changed (rule 22 of docs/semantics.md).
pub struct ValueStore<T> {
    slots: Vec<Option<Stamped<T>>>,
    initial: T,
    ttl: Ttl,
    live: usize,
}

impl<T: StateValue> ValueStore<T> {
    pub fn new(spec: &StateSpec) -> Self {
        ValueStore {
            slots: Vec::new(),
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
        if let Some(slot) = self.slots.get_mut(key)
            && let Some(entry) = slot
        {
            if !self.ttl.expired(entry.written, now) {
                return entry.value.clone();
            }
            *slot = None;
            self.live -= 1;
        }
        self.initial.clone()
    }

    #[inline]
    pub fn store(&mut self, key: usize, value: T, now: i64) -> bool {
        if self.slots.len() <= key {
            if value == self.initial {
                return true;
            }
            self.slots.resize_with(key + 1, || None);
        }
        let slot = &mut self.slots[key];
        match slot {
            Some(entry) if entry.value == value => false,
            Some(_) if value == self.initial => {
                *slot = None;
                self.live -= 1;
                true
            }
            Some(entry) => {
                entry.value = value;
                entry.written = now;
                false
            }
            None if value == self.initial => true,
            None => {
                *slot = Some(Stamped {
                    value,
                    written: now,
                });
                self.live += 1;
                false
            }
        }
    }

    pub fn clear(&mut self, key: usize) {
        if let Some(slot) = self.slots.get_mut(key)
            && slot.take().is_some()
        {
            self.live -= 1;
        }
    }

    pub fn is_absent(&self, key: usize) -> bool {
        !matches!(self.slots.get(key), Some(Some(_)))
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
}

impl<T: StateValue> ValueStates<T> for ValueStore<T> {
    fn load(&mut self, key: usize, now: i64) -> T {
        ValueStore::load(self, key, now)
    }

    fn store(&mut self, key: usize, value: T, now: i64) -> bool {
        ValueStore::store(self, key, value, now)
    }

    fn clear(&mut self, key: usize) {
        ValueStore::clear(self, key)
    }

    fn is_absent(&self, key: usize) -> bool {
        ValueStore::is_absent(self, key)
    }

    fn len(&self) -> usize {
        ValueStore::len(self)
    }
}

/// One view per key slot; an empty view is an absent entry.
pub struct ViewStore<V> {
    views: Vec<V>,
    ttl: Ttl,
}

impl<V: KeyedView> ViewStore<V> {
    pub fn new(spec: &StateSpec) -> Self {
        ViewStore {
            views: Vec::new(),
            ttl: Ttl::of(spec),
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

impl<V: KeyedView + Send> ViewStates<V> for ViewStore<V> {
    fn view(&mut self, key: usize, now: i64) -> &mut V {
        ViewStore::view(self, key, now)
    }

    fn finish(&mut self, key: usize) -> bool {
        ViewStore::finish(self, key)
    }

    fn clear(&mut self, key: usize) {
        ViewStore::clear(self, key)
    }

    fn is_absent(&self, key: usize) -> bool {
        ViewStore::is_absent(self, key)
    }

    fn len(&self) -> usize {
        ViewStore::len(self)
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
