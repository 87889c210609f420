//! `ListView` and `MapView`: list and map state whose entries are read and written one at
//! a time, each with its own TTL — in memory, or kept item by item in a store
//! (`items.rs`) with the disk backend.

mod list;
mod map;

use std::collections::HashMap;
use std::hash::Hash;

pub use list::{ListElements, ListView};
pub use map::{MapEntries, MapView};

use super::items::Items;
use super::stores::{decode, encode_live};
use super::ttl::{Stamped, Ttl};
use super::{StateItem, StateKey};
use crate::Error;

/// What the stores need of a view.
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
    /// Whether it is a map (its saved form has keys).
    #[doc(hidden)]
    const MAP: bool;
    /// Appends the entries live at `now` with their stamps; `false` if none is.
    #[doc(hidden)]
    fn save(&self, ttl: Option<i64>, now: i64, out: &mut Vec<u8>) -> Result<bool, Error>;
    /// Replaces the entries by those `save` wrote.
    #[doc(hidden)]
    fn restore(&mut self, bytes: &[u8]) -> Result<(), Error>;
    /// A view whose items `items` keeps in a store.
    #[doc(hidden)]
    fn stored(items: Items) -> Self;
    /// The store's items, for a view made by [`stored`](Self::stored).
    #[doc(hidden)]
    fn items_mut(&mut self) -> Option<&mut Items>;
    /// A stored view after a call: what it read is dropped.
    #[doc(hidden)]
    fn forget_reads(&mut self);
    /// Writes the entries `save` wrote into the store, keeping their stamps.
    #[doc(hidden)]
    fn restore_items(&mut self, bytes: &[u8]) -> Result<(), Error>;
}

impl<T> KeyedView for ListView<T> {
    fn prepare(&mut self, ttl: Option<i64>, now: i64) {
        ListView::prepare(self, ttl, now);
    }

    fn finish(&mut self) {
        self.purge();
    }

    fn clear_all(&mut self) {
        self.clear_memory();
    }

    fn is_absent(&self) -> bool {
        self.is_empty_in_memory()
    }
}

impl<K: Eq + Hash, V> KeyedView for MapView<K, V> {
    fn prepare(&mut self, ttl: Option<i64>, now: i64) {
        MapView::prepare(self, ttl, now);
    }

    fn finish(&mut self) {
        self.purge();
    }

    fn clear_all(&mut self) {
        self.clear_memory();
    }

    fn is_absent(&self) -> bool {
        self.is_empty_in_memory()
    }
}

impl<T: StateItem> SavedView for ListView<T> {
    const MAP: bool = false;

    fn save(&self, ttl: Option<i64>, now: i64, out: &mut Vec<u8>) -> Result<bool, Error> {
        let ttl = Ttl(ttl);
        let live: Vec<&Stamped<T>> = self
            .memory_entries()
            .iter()
            .filter(|e| !ttl.expired(e.written, now))
            .collect();
        encode_live(live, out)
    }

    fn restore(&mut self, bytes: &[u8]) -> Result<(), Error> {
        *self.memory_entries_mut() = decode(bytes)?;
        Ok(())
    }

    fn stored(items: Items) -> Self {
        ListView::stored(items)
    }

    fn items_mut(&mut self) -> Option<&mut Items> {
        ListView::items_mut(self)
    }

    fn forget_reads(&mut self) {
        ListView::forget_reads(self);
    }

    fn restore_items(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let elements: Vec<Stamped<T>> = decode(bytes)?;
        let items = stored_items(self.items_mut())?;
        items.delete_all();
        for (position, element) in elements.iter().enumerate() {
            items.item.clear();
            items
                .item
                .extend_from_slice(&(position as u64).to_be_bytes());
            if items.encode_value(&element.value) {
                items.put(element.written);
            }
        }
        items.take_failure()
    }
}

impl<K: StateKey, V: StateItem> SavedView for MapView<K, V> {
    const MAP: bool = true;

    fn save(&self, ttl: Option<i64>, now: i64, out: &mut Vec<u8>) -> Result<bool, Error> {
        let ttl = Ttl(ttl);
        let live: Vec<(&K, &Stamped<V>)> = self
            .memory_entries()
            .iter()
            .filter(|(_, e)| !ttl.expired(e.written, now))
            .collect();
        encode_live(live, out)
    }

    fn restore(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let entries: Vec<(K, Stamped<V>)> = decode(bytes)?;
        *self.memory_entries_mut() = entries.into_iter().collect::<HashMap<_, _>>();
        Ok(())
    }

    fn stored(items: Items) -> Self {
        MapView::stored(items)
    }

    fn items_mut(&mut self) -> Option<&mut Items> {
        MapView::items_mut(self)
    }

    fn forget_reads(&mut self) {
        MapView::forget_reads(self);
    }

    fn restore_items(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let entries: Vec<(K, Stamped<V>)> = decode(bytes)?;
        self.forget_reads();
        let items = stored_items(self.items_mut())?;
        items.delete_all();
        for (key, entry) in &entries {
            if items.encode_item(key) && items.encode_value(&entry.value) {
                items.put(entry.written);
            }
        }
        items.take_failure()
    }
}

fn stored_items(items: Option<&mut Items>) -> Result<&mut Items, Error> {
    items.ok_or_else(|| Error::msg("the view is not kept in a store"))
}
