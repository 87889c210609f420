//! Keyed state of process table functions.
//!
//! Every key a processor holds state for gets a slot number from the runtime's key table; a
//! store holds one entry per slot. Generated code holds each entry's store as a
//! [`ValueSlot`] / [`ViewSlot`] made by the processor's [`StateBackend`]: the in-memory store
//! inline, any other backend behind the `ValueStates` / `ViewStates` traits — the seam a disk
//! backend fills. The one backend today keeps values typed in memory (`memory.rs`), with no
//! serialization on access. The runtime sees a function's stores through [`StateStores`] and
//! [`EntryStore`] (`stores.rs`): to free slots, count entries, snapshot and restore them.
//!
//! TTL (rule 24 of docs/semantics.md): an entry written at `t` is gone from `t + ttl` on (processing time); reading
//! it does not extend its life. Lists and maps expire entry by entry (rule 23 of docs/semantics.md).

mod items;
mod memory;
mod stored;
mod stores;
mod ttl;
mod views;

use std::hash::Hash;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::spec::StateSpec;
use crate::types::{DataType, TypeKind};
use crate::value::Value;
use crate::{Error, Row};

pub use items::{ItemStore, StoredItem, save_items};
pub use memory::{ValueStore, ViewStore};
pub use stored::StoredViews;
pub(crate) use stores::decode;
pub use stores::{EntryStore, NoState, StateStores};
pub use views::{KeyedView, ListElements, ListView, MapEntries, MapView, SavedView};

/// A type a value state entry can hold: `Default + Clone + PartialEq + Serialize +
/// DeserializeOwned`, or `Row` with a `type` hint.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a state entry",
    label = "state types need `Default + Clone + PartialEq + Serialize + DeserializeOwned + Send`",
    note = "derive them: #[derive(Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]"
)]
pub trait StateValue: Clone + PartialEq + Serialize + DeserializeOwned + Send + 'static {
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

/// A `Row` state holds the fields of its hint, all NULL while absent (as in Flink); it is
/// saved without its field names (the hint gives them again).
impl StateValue for Row {
    fn initial(data_type: Option<&DataType>) -> Self {
        match data_type.map(|t| &t.kind) {
            Some(TypeKind::Row(fields)) => Row::with_names(
                vec![Value::Null; fields.len()],
                fields.iter().map(|f| f.name.clone()).collect(),
            ),
            _ => Row::new(Vec::new()),
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

/// The state of one entry for every key slot of a processor: what generated code calls.
/// The in-memory backend keeps values typed; a disk backend implements the same trait.
pub trait ValueStates<T>: EntryStore {
    /// The value of `key` for one call, changed in place: its entry, or the initial value.
    fn value(&mut self, key: usize, now: i64) -> &mut T;
    /// After the call: the value is written if it changed; the initial value removes it.
    /// Whether `key` has no entry afterwards.
    fn finish(&mut self, key: usize, now: i64) -> bool;
}

/// A list or map entry for every key slot, handed to calls as a view.
pub trait ViewStates<V>: EntryStore {
    /// The view of `key` for one call.
    fn view(&mut self, key: usize, now: i64) -> &mut V;
    /// After the call: expired entries go. Whether `key` has no entries in memory
    /// afterwards; a store's failure during the call.
    fn finish(&mut self, key: usize) -> Result<bool, Error>;
}

/// The store of one value state entry as generated code holds it: the in-memory store
/// inline (so its calls inline), any other backend's behind [`ValueStates`].
pub enum ValueSlot<T> {
    Memory(ValueStore<T>),
    Backend(Box<dyn ValueStates<T>>),
}

impl<T: Clone + PartialEq + Send + 'static> ValueSlot<T> {
    #[inline]
    pub fn value(&mut self, key: usize, now: i64) -> &mut T {
        match self {
            ValueSlot::Memory(store) => store.value(key, now),
            ValueSlot::Backend(store) => store.value(key, now),
        }
    }

    #[inline]
    pub fn finish(&mut self, key: usize, now: i64) -> bool {
        match self {
            ValueSlot::Memory(store) => store.finish(key, now),
            ValueSlot::Backend(store) => store.finish(key, now),
        }
    }

    fn entries(&self) -> &dyn EntryStore {
        match self {
            ValueSlot::Memory(store) => store,
            ValueSlot::Backend(store) => store.as_ref(),
        }
    }

    fn entries_mut(&mut self) -> &mut dyn EntryStore {
        match self {
            ValueSlot::Memory(store) => store,
            ValueSlot::Backend(store) => store.as_mut(),
        }
    }
}

/// The store of one list or map entry as generated code holds it (see [`ValueSlot`]).
pub enum ViewSlot<V> {
    Memory(ViewStore<V>),
    Backend(Box<dyn ViewStates<V>>),
}

impl<V: KeyedView + Send + 'static> ViewSlot<V> {
    #[inline]
    pub fn view(&mut self, key: usize, now: i64) -> &mut V {
        match self {
            ViewSlot::Memory(store) => store.view(key, now),
            ViewSlot::Backend(store) => store.view(key, now),
        }
    }

    #[inline]
    pub fn finish(&mut self, key: usize) -> Result<bool, Error> {
        match self {
            ViewSlot::Memory(store) => Ok(store.finish(key)),
            ViewSlot::Backend(store) => store.finish(key),
        }
    }

    fn entries(&self) -> &dyn EntryStore {
        match self {
            ViewSlot::Memory(store) => store,
            ViewSlot::Backend(store) => store.as_ref(),
        }
    }

    fn entries_mut(&mut self) -> &mut dyn EntryStore {
        match self {
            ViewSlot::Memory(store) => store,
            ViewSlot::Backend(store) => store.as_mut(),
        }
    }
}

/// Both kinds of slot are entry stores, whatever their backend.
macro_rules! entry_store_of_slot {
    ($($slot:ident<$param:ident: $($bound:path)+>),*) => {$(
        impl<$param: $($bound +)* 'static> EntryStore for $slot<$param> {
            #[inline]
            fn is_absent(&self, slot: u32) -> bool {
                self.entries().is_absent(slot)
            }

            #[inline]
            fn clear(&mut self, slot: u32) -> Result<(), Error> {
                self.entries_mut().clear(slot)
            }

            fn bind(&mut self, slot: u32, key: &[u8]) {
                self.entries_mut().bind(slot, key)
            }

            fn release(&mut self, slot: u32) {
                self.entries_mut().release(slot)
            }

            fn len(&self) -> usize {
                self.entries().len()
            }

            fn occupied(&self) -> Vec<u32> {
                self.entries().occupied()
            }

            fn save(&self, slot: u32, now: i64, out: &mut Vec<u8>) -> Result<bool, Error> {
                self.entries().save(slot, now, out)
            }

            fn restore(&mut self, slot: u32, bytes: &[u8]) -> Result<(), Error> {
                self.entries_mut().restore(slot, bytes)
            }
        }
    )*};
}

entry_store_of_slot!(ValueSlot<T: Clone PartialEq Send>, ViewSlot<V: KeyedView Send>);

/// Where a processor keeps its keyed state.
#[non_exhaustive]
#[derive(Clone, Default)]
pub enum StateBackend {
    /// Typed values and views in memory, no serialization on access.
    #[default]
    InMemory,
    /// Values typed in memory (the runtime moves those of keys beyond its budget out), list
    /// and map entries item by item in the store.
    Items(Arc<dyn ItemStore>),
}

impl std::fmt::Debug for StateBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateBackend::InMemory => f.write_str("InMemory"),
            StateBackend::Items(_) => f.write_str("Items"),
        }
    }
}

impl StateBackend {
    /// The store of a value state entry.
    pub fn values<T: StateValue>(&self, spec: &StateSpec) -> ValueSlot<T> {
        ValueSlot::Memory(ValueStore::<T>::new(spec))
    }

    /// The store of `ListView` entry `entry` (declaration order).
    pub fn lists<T: StateItem>(
        &self,
        spec: &StateSpec,
        entry: usize,
    ) -> Result<ViewSlot<ListView<T>>, Error> {
        self.views(spec, entry)
    }

    /// The store of `MapView` entry `entry` (declaration order).
    pub fn maps<K: StateKey, V: StateItem>(
        &self,
        spec: &StateSpec,
        entry: usize,
    ) -> Result<ViewSlot<MapView<K, V>>, Error> {
        self.views(spec, entry)
    }

    fn views<V: SavedView + Send + 'static>(
        &self,
        spec: &StateSpec,
        entry: usize,
    ) -> Result<ViewSlot<V>, Error> {
        Ok(match self {
            StateBackend::InMemory => ViewSlot::Memory(ViewStore::<V>::new(spec)),
            StateBackend::Items(store) => {
                let entry = u16::try_from(entry).map_err(|_| {
                    Error::msg(format!(
                        "state entry `{}`: a function with more than {} state entries cannot keep them in a store",
                        spec.name,
                        u16::MAX
                    ))
                })?;
                ViewSlot::Backend(Box::new(StoredViews::<V>::new(spec, store.clone(), entry)))
            }
        })
    }
}
