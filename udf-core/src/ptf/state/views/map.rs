//! `MapView`: in memory, a hash map of stamped values; kept in a store, a read-through view
//! of the store's items (a `get` reads one item; what a call read stays decoded until the
//! call ends, so a get then a put reads once).

use std::borrow::Borrow;
use std::collections::HashMap;
use std::collections::hash_map;
use std::hash::Hash;

use serde::Serialize;

use super::super::items::{Items, LiveItems};
use super::super::stores::decode;
use super::super::ttl::{Stamped, Ttl};
use super::super::{StateItem, StateKey};

/// Map state as a view: entries are read and written by key without loading the others
/// (Flink's `MapView`). Each entry expires on its own.
///
/// With the disk backend every entry lives in the store: `get` reads the one entry it is
/// asked for, a `put` or `remove` writes it through, and iterating streams the entries
/// from the store. Two keys are then the same entry when their serialized forms are equal.
#[derive(Debug)]
pub struct MapView<K, V> {
    /// In memory: the entries. Kept in a store: the entries this call read.
    entries: HashMap<K, Stamped<V>>,
    ttl: Ttl,
    now: i64,
    stored: Option<Box<Items>>,
}

impl<K, V> Default for MapView<K, V> {
    fn default() -> Self {
        MapView {
            entries: HashMap::new(),
            ttl: Ttl::default(),
            now: 0,
            stored: None,
        }
    }
}

impl<K: StateKey, V: StateItem> MapView<K, V> {
    /// The live value of `key`.
    pub fn get<Q>(&mut self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + Serialize + ?Sized,
    {
        if let Some(items) = &mut self.stored
            && !self.entries.contains_key(key)
        {
            let (key, value) = read(items, key)?;
            return Some(&self.entries.entry(key).or_insert(value).value);
        }
        let (ttl, now) = (self.ttl, self.now);
        self.entries
            .get(key)
            .filter(|e| !ttl.expired(e.written, now))
            .map(|e| &e.value)
    }

    pub fn contains<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + Serialize + ?Sized,
    {
        if let Some(items) = &mut self.stored
            && !self.entries.contains_key(key)
        {
            return items.encode_item(key) && items.get().is_some();
        }
        self.get(key).is_some()
    }

    /// Sets `key` to `value` (written now, for TTL).
    pub fn put(&mut self, key: K, value: V) {
        if let Some(items) = &mut self.stored {
            if !(items.encode_item(&key) && items.encode_value(&value)) {
                return;
            }
            items.put(self.now);
            // What this call read stays in step; an entry it did not read is not kept.
            if let Some(read) = self.entries.get_mut(&key) {
                *read = Stamped {
                    value,
                    written: self.now,
                };
            }
            return;
        }
        self.entries.insert(
            key,
            Stamped {
                value,
                written: self.now,
            },
        );
    }

    pub fn put_all(&mut self, entries: impl IntoIterator<Item = (K, V)>) {
        for (key, value) in entries {
            self.put(key, value);
        }
    }

    /// Removes `key`.
    pub fn remove<Q>(&mut self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + Serialize + ?Sized,
    {
        if let Some(items) = &mut self.stored
            && items.encode_item(key)
        {
            items.delete();
        }
        self.entries.remove(key);
    }

    /// The live entries (copies), in no particular order; with the disk backend, streamed
    /// from the store.
    pub fn iter(&mut self) -> MapEntries<'_, K, V> {
        let inner = match &mut self.stored {
            Some(items) => Inner::Stored(items.live()),
            None => Inner::Memory {
                entries: self.entries.iter(),
                ttl: self.ttl,
                now: self.now,
            },
        };
        MapEntries { inner }
    }

    pub fn keys(&mut self) -> impl Iterator<Item = K> + '_ {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&mut self) -> impl Iterator<Item = V> + '_ {
        self.iter().map(|(_, v)| v)
    }

    pub fn clear(&mut self) {
        if let Some(items) = &mut self.stored {
            items.delete_all();
        }
        self.entries.clear();
    }

    /// The number of live entries (with the disk backend, counted in the store).
    pub fn len(&mut self) -> usize {
        match &mut self.stored {
            Some(items) => items.live().count(),
            None => self.live().count(),
        }
    }

    pub fn is_empty(&mut self) -> bool {
        match &mut self.stored {
            Some(items) => items.live().next().is_none(),
            None => self.live().next().is_none(),
        }
    }

    fn live(&self) -> impl Iterator<Item = (&K, &Stamped<V>)> {
        let (ttl, now) = (self.ttl, self.now);
        self.entries
            .iter()
            .filter(move |(_, e)| !ttl.expired(e.written, now))
    }
}

/// The live entry `key` from the store, decoded.
fn read<K: StateKey, V: StateItem, Q: Serialize + ?Sized>(
    items: &mut Items,
    key: &Q,
) -> Option<(K, Stamped<V>)> {
    if !items.encode_item(key) {
        return None;
    }
    let written = items.get()?;
    let outcome = decode::<K>(&items.item);
    let key = items.keep(outcome)?;
    let outcome = decode::<V>(&items.value);
    let value = items.keep(outcome)?;
    Some((key, Stamped { value, written }))
}

/// A map view's live entries.
pub struct MapEntries<'a, K, V> {
    inner: Inner<'a, K, V>,
}

enum Inner<'a, K, V> {
    Memory {
        entries: hash_map::Iter<'a, K, Stamped<V>>,
        ttl: Ttl,
        now: i64,
    },
    Stored(LiveItems<'a>),
}

impl<K: StateKey, V: StateItem> Iterator for MapEntries<'_, K, V> {
    type Item = (K, V);

    fn next(&mut self) -> Option<(K, V)> {
        match &mut self.inner {
            Inner::Memory { entries, ttl, now } => entries
                .find(|(_, e)| !ttl.expired(e.written, *now))
                .map(|(k, e)| (k.clone(), e.value.clone())),
            Inner::Stored(live) => {
                let item = live.next()?;
                match decode::<K>(&item.item).and_then(|k| Ok((k, decode::<V>(&item.value)?))) {
                    Ok(entry) => Some(entry),
                    Err(error) => {
                        live.fail(error);
                        None
                    }
                }
            }
        }
    }
}

impl<K, V> MapView<K, V> {
    pub(super) fn prepare(&mut self, ttl: Option<i64>, now: i64) {
        self.ttl = Ttl(ttl);
        self.now = now;
    }

    pub(super) fn purge(&mut self) {
        let (ttl, now) = (self.ttl, self.now);
        self.entries.retain(|_, e| !ttl.expired(e.written, now));
    }

    pub(super) fn clear_memory(&mut self) {
        self.entries = HashMap::new();
    }

    pub(super) fn is_empty_in_memory(&self) -> bool {
        self.entries.is_empty()
    }

    pub(super) fn memory_entries(&self) -> &HashMap<K, Stamped<V>> {
        &self.entries
    }

    pub(super) fn memory_entries_mut(&mut self) -> &mut HashMap<K, Stamped<V>> {
        &mut self.entries
    }

    /// A view of the items `items` keeps.
    pub(super) fn stored(items: Items) -> Self {
        MapView {
            ttl: items.ttl,
            stored: Some(Box::new(items)),
            ..MapView::default()
        }
    }

    pub(super) fn items_mut(&mut self) -> Option<&mut Items> {
        self.stored.as_deref_mut()
    }

    /// A stored view after its call: what it read is dropped (a large one's room too).
    pub(super) fn forget_reads(&mut self) {
        if self.entries.capacity() > 1024 {
            self.entries = HashMap::new();
        } else {
            self.entries.clear();
        }
    }
}
