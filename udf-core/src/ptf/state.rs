//! Keyed state of process table functions, kept typed in memory.
//!
//! Every key a processor has seen gets a slot number from the runtime; a store holds one
//! entry per slot. Generated code talks to the stores only through `load`/`store`/`view`/
//! `finish`/`clear`/`is_absent`, which is the seam a disk-backed store can fill later (the
//! types are `Serialize + DeserializeOwned` for that reason).
//!
//! TTL (rule 24): an entry written at `t` is gone from `t + ttl` on (processing time); reading
//! it does not extend its life. Lists and maps expire entry by entry (rule 23).

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Row;
use crate::spec::StateSpec;
use crate::types::{DataType, TypeKind};
use crate::value::Value;

/// A type a value state entry can hold: `Default + Clone + PartialEq + Serialize +
/// DeserializeOwned`, or `Row` with a `type` hint.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a state entry",
    label = "state types need `Default + Clone + PartialEq + Serialize + DeserializeOwned + Send`",
    note = "derive them: #[derive(Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]"
)]
pub trait StateValue: Clone + PartialEq + Send + 'static {
    /// The value of an absent entry (an entry equal to it is stored as absent).
    fn initial(data_type: Option<&DataType>) -> Self;
}

impl<T> StateValue for T
where
    T: Default + Clone + PartialEq + Serialize + DeserializeOwned + Send + 'static,
{
    fn initial(_: Option<&DataType>) -> Self {
        T::default()
    }
}

/// A `Row` state holds the fields of its hint, all NULL while absent (as in Flink).
impl StateValue for Row {
    fn initial(data_type: Option<&DataType>) -> Self {
        match data_type.map(|t| &t.kind) {
            Some(TypeKind::Row(fields)) => Row::with_names(
                vec![Value::Null; fields.len()],
                fields.iter().map(|f| f.name.clone()).collect(),
            ),
            _ => Row::default(),
        }
    }
}

/// A type a `ListView` element or a `MapView` value can be.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be stored in a ListView or MapView",
    label = "entries need `Clone + Serialize + DeserializeOwned + Send`"
)]
pub trait StateItem: Clone + Serialize + DeserializeOwned + Send + 'static {}

impl<T: Clone + Serialize + DeserializeOwned + Send + 'static> StateItem for T {}

/// A type a `MapView` key can be.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a MapView key",
    label = "keys need `Eq + Hash + Clone + Serialize + DeserializeOwned + Send`"
)]
pub trait StateKey: StateItem + Eq + Hash {}

impl<T: StateItem + Eq + Hash> StateKey for T {}

/// A value and when it was last written (processing time, ms).
#[derive(Clone, Debug)]
struct Stamped<T> {
    value: T,
    written: i64,
}

/// TTL in milliseconds, or none.
#[derive(Clone, Copy, Debug, Default)]
struct Ttl(Option<i64>);

impl Ttl {
    fn of(spec: &StateSpec) -> Self {
        Ttl(spec
            .ttl
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
    }

    #[inline]
    fn expired(self, written: i64, now: i64) -> bool {
        matches!(self.0, Some(ttl) if written.saturating_add(ttl) <= now)
    }
}

/// Value state: read before each call, written after it only if it changed (rule 22).
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

// Only what the accessors need, so that a state type missing a trait is reported once, at
// the constructor, not at every generated call.
impl<T: Clone + PartialEq> ValueStore<T> {
    /// The value of `key` for one call: its entry, or the initial value.
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

    /// Writes `value` back if it differs from the entry; the initial value removes it.
    #[inline]
    pub fn store(&mut self, key: usize, value: T, now: i64) {
        if self.slots.len() <= key {
            if value == self.initial {
                return;
            }
            self.slots.resize_with(key + 1, || None);
        }
        let slot = &mut self.slots[key];
        match slot {
            Some(entry) if entry.value == value => {}
            Some(_) if value == self.initial => {
                *slot = None;
                self.live -= 1;
            }
            Some(entry) => {
                entry.value = value;
                entry.written = now;
            }
            None if value == self.initial => {}
            None => {
                *slot = Some(Stamped {
                    value,
                    written: now,
                });
                self.live += 1;
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

    /// Entries held (expired ones not yet noticed included).
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
}

/// List state as a view: elements are added, read and removed one at a time (Flink's
/// `ListView`). Each element expires on its own.
#[derive(Debug)]
pub struct ListView<T> {
    entries: Vec<Stamped<T>>,
    ttl: Ttl,
    now: i64,
}

impl<T> Default for ListView<T> {
    fn default() -> Self {
        ListView {
            entries: Vec::new(),
            ttl: Ttl::default(),
            now: 0,
        }
    }
}

impl<T: StateItem> ListView<T> {
    /// The live elements, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        let (ttl, now) = (self.ttl, self.now);
        self.entries
            .iter()
            .filter(move |e| !ttl.expired(e.written, now))
            .map(|e| &e.value)
    }

    /// A copy of the live elements (Flink's `getList()`).
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }

    pub fn add(&mut self, value: T) {
        self.entries.push(Stamped {
            value,
            written: self.now,
        });
    }

    pub fn add_all(&mut self, values: impl IntoIterator<Item = T>) {
        for value in values {
            self.add(value);
        }
    }

    /// Removes the first live element equal to `value`; whether there was one.
    pub fn remove(&mut self, value: &T) -> bool
    where
        T: PartialEq,
    {
        let (ttl, now) = (self.ttl, self.now);
        match self
            .entries
            .iter()
            .position(|e| !ttl.expired(e.written, now) && &e.value == value)
        {
            Some(index) => {
                self.entries.remove(index);
                true
            }
            None => false,
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The number of live elements.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

impl<T> ListView<T> {
    fn purge(&mut self) {
        let (ttl, now) = (self.ttl, self.now);
        self.entries.retain(|e| !ttl.expired(e.written, now));
    }
}

/// Map state as a view: entries are read and written by key without loading the others
/// (Flink's `MapView`). Each entry expires on its own.
#[derive(Debug)]
pub struct MapView<K, V> {
    entries: HashMap<K, Stamped<V>>,
    ttl: Ttl,
    now: i64,
}

impl<K, V> Default for MapView<K, V> {
    fn default() -> Self {
        MapView {
            entries: HashMap::new(),
            ttl: Ttl::default(),
            now: 0,
        }
    }
}

impl<K: StateKey, V: StateItem> MapView<K, V> {
    /// The live value of `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries
            .get(key)
            .filter(|e| !self.ttl.expired(e.written, self.now))
            .map(|e| &e.value)
    }

    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`; the previous live value, if any.
    pub fn put(&mut self, key: K, value: V) -> Option<V> {
        let previous = self.entries.insert(
            key,
            Stamped {
                value,
                written: self.now,
            },
        )?;
        (!self.ttl.expired(previous.written, self.now)).then_some(previous.value)
    }

    pub fn put_all(&mut self, entries: impl IntoIterator<Item = (K, V)>) {
        for (key, value) in entries {
            self.put(key, value);
        }
    }

    /// Removes `key`; its live value, if any.
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let previous = self.entries.remove(key)?;
        (!self.ttl.expired(previous.written, self.now)).then_some(previous.value)
    }

    /// The live entries, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        let (ttl, now) = (self.ttl, self.now);
        self.entries
            .iter()
            .filter(move |(_, e)| !ttl.expired(e.written, now))
            .map(|(k, e)| (k, &e.value))
    }

    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.iter().map(|(_, v)| v)
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The number of live entries.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

impl<K, V> MapView<K, V> {
    fn purge(&mut self) {
        let (ttl, now) = (self.ttl, self.now);
        self.entries.retain(|_, e| !ttl.expired(e.written, now));
    }
}

/// One view per key slot; an empty view is an absent entry.
pub struct ViewStore<V> {
    views: Vec<V>,
    ttl: Ttl,
}

/// What [`ViewStore`] needs of a view.
pub trait KeyedView: Default {
    #[doc(hidden)]
    fn prepare(&mut self, ttl: Option<i64>, now: i64);
    #[doc(hidden)]
    fn finish(&mut self);
    #[doc(hidden)]
    fn clear_all(&mut self);
    #[doc(hidden)]
    fn is_absent(&self) -> bool;
}

impl<T> KeyedView for ListView<T> {
    fn prepare(&mut self, ttl: Option<i64>, now: i64) {
        self.ttl = Ttl(ttl);
        self.now = now;
    }

    fn finish(&mut self) {
        self.purge();
    }

    fn clear_all(&mut self) {
        self.entries = Vec::new();
    }

    fn is_absent(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<K: Eq + Hash, V> KeyedView for MapView<K, V> {
    fn prepare(&mut self, ttl: Option<i64>, now: i64) {
        self.ttl = Ttl(ttl);
        self.now = now;
    }

    fn finish(&mut self) {
        self.purge();
    }

    fn clear_all(&mut self) {
        self.entries = HashMap::new();
    }

    fn is_absent(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<V: KeyedView> ViewStore<V> {
    pub fn new(spec: &StateSpec) -> Self {
        ViewStore {
            views: Vec::new(),
            ttl: Ttl::of(spec),
        }
    }

    /// The view of `key` for one call.
    #[inline]
    pub fn view(&mut self, key: usize, now: i64) -> &mut V {
        if self.views.len() <= key {
            self.views.resize_with(key + 1, V::default);
        }
        let view = &mut self.views[key];
        view.prepare(self.ttl.0, now);
        view
    }

    /// After the call: drops expired entries.
    #[inline]
    pub fn finish(&mut self, key: usize) {
        if let Some(view) = self.views.get_mut(key) {
            view.finish();
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

    /// Keys with a non-empty view.
    pub fn len(&self) -> usize {
        self.views.iter().filter(|v| !v.is_absent()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
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
