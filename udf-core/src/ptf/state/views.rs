//! `ListView` and `MapView`: list and map state whose entries are read and written one at
//! a time, each with its own TTL.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

use super::stores::{decode, encode_live};
use super::ttl::{Stamped, Ttl};
use super::{StateItem, StateKey};
use crate::Error;

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

/// What [`ViewStore`](super::ViewStore) needs of a view.
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

/// A view whose entries can be saved (its element, key and value types are serde types).
pub trait SavedView: KeyedView {
    /// Appends the entries live at `now` with their stamps; `false` if none is.
    #[doc(hidden)]
    fn save(&self, ttl: Option<i64>, now: i64, out: &mut Vec<u8>) -> Result<bool, Error>;
    /// Replaces the entries by those `save` wrote.
    #[doc(hidden)]
    fn restore(&mut self, bytes: &[u8]) -> Result<(), Error>;
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

impl<T: StateItem> SavedView for ListView<T> {
    fn save(&self, ttl: Option<i64>, now: i64, out: &mut Vec<u8>) -> Result<bool, Error> {
        let ttl = Ttl(ttl);
        let live: Vec<&Stamped<T>> = self
            .entries
            .iter()
            .filter(|e| !ttl.expired(e.written, now))
            .collect();
        encode_live(live, out)
    }

    fn restore(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.entries = decode(bytes)?;
        Ok(())
    }
}

impl<K: StateKey, V: StateItem> SavedView for MapView<K, V> {
    fn save(&self, ttl: Option<i64>, now: i64, out: &mut Vec<u8>) -> Result<bool, Error> {
        let ttl = Ttl(ttl);
        let live: Vec<(&K, &Stamped<V>)> = self
            .entries
            .iter()
            .filter(|(_, e)| !ttl.expired(e.written, now))
            .collect();
        encode_live(live, out)
    }

    fn restore(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let entries: Vec<(K, Stamped<V>)> = decode(bytes)?;
        self.entries = entries.into_iter().collect();
        Ok(())
    }
}
