//! Keyed state of process table functions.
//!
//! Every key a processor has seen gets a slot number from the runtime; a store holds one
//! entry per slot. Generated code holds each entry's store as a [`ValueSlot`] /
//! [`ViewSlot`] made by the processor's [`StateBackend`]: the in-memory store inline, any
//! other backend behind the `ValueStates` / `ViewStates` traits — the seam a disk backend
//! fills (state types are `Serialize + DeserializeOwned` for it). The one backend today keeps
//! values typed in memory (`memory.rs`), with no serialization on access.
//!
//! TTL (rule 24 of docs/semantics.md): an entry written at `t` is gone from `t + ttl` on (processing time); reading
//! it does not extend its life. Lists and maps expire entry by entry (rule 23 of docs/semantics.md).

mod memory;
mod ttl;
mod views;

use std::hash::Hash;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Row;
use crate::spec::StateSpec;
use crate::types::{DataType, TypeKind};
use crate::value::Value;

pub use memory::{ValueStore, ViewStore};
pub use views::{KeyedView, ListView, MapView};

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

/// The state of one entry for every key slot of a processor: what generated code calls.
/// The in-memory backend keeps values typed; a disk backend implements the same trait.
pub trait ValueStates<T>: Send {
    /// The value of `key` for one call: its entry, or the initial value.
    fn load(&mut self, key: usize, now: i64) -> T;
    /// Writes `value` back if it differs from the entry; the initial value removes it.
    /// Whether `key` has no entry afterwards.
    fn store(&mut self, key: usize, value: T, now: i64) -> bool;
    fn clear(&mut self, key: usize);
    fn is_absent(&self, key: usize) -> bool;
    /// Entries held.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A list or map entry for every key slot, handed to calls as a view.
pub trait ViewStates<V>: Send {
    /// The view of `key` for one call.
    fn view(&mut self, key: usize, now: i64) -> &mut V;
    /// After the call: expired entries go (a disk backend writes the view back here).
    /// Whether `key` has no entries afterwards.
    fn finish(&mut self, key: usize) -> bool;
    fn clear(&mut self, key: usize);
    fn is_absent(&self, key: usize) -> bool;
    /// Keys with entries.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The store of one value state entry as generated code holds it: the in-memory store
/// inline (so its calls inline), any other backend's behind [`ValueStates`].
pub enum ValueSlot<T> {
    Memory(ValueStore<T>),
    Backend(Box<dyn ValueStates<T>>),
}

impl<T: Clone + PartialEq> ValueSlot<T> {
    #[inline]
    pub fn load(&mut self, key: usize, now: i64) -> T {
        match self {
            ValueSlot::Memory(store) => store.load(key, now),
            ValueSlot::Backend(store) => store.load(key, now),
        }
    }

    #[inline]
    pub fn store(&mut self, key: usize, value: T, now: i64) -> bool {
        match self {
            ValueSlot::Memory(store) => store.store(key, value, now),
            ValueSlot::Backend(store) => store.store(key, value, now),
        }
    }

    pub fn clear(&mut self, key: usize) {
        match self {
            ValueSlot::Memory(store) => store.clear(key),
            ValueSlot::Backend(store) => store.clear(key),
        }
    }

    pub fn is_absent(&self, key: usize) -> bool {
        match self {
            ValueSlot::Memory(store) => store.is_absent(key),
            ValueSlot::Backend(store) => store.is_absent(key),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            ValueSlot::Memory(store) => store.len(),
            ValueSlot::Backend(store) => store.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The store of one list or map entry as generated code holds it (see [`ValueSlot`]).
pub enum ViewSlot<V> {
    Memory(ViewStore<V>),
    Backend(Box<dyn ViewStates<V>>),
}

impl<V: KeyedView> ViewSlot<V> {
    #[inline]
    pub fn view(&mut self, key: usize, now: i64) -> &mut V {
        match self {
            ViewSlot::Memory(store) => store.view(key, now),
            ViewSlot::Backend(store) => store.view(key, now),
        }
    }

    #[inline]
    pub fn finish(&mut self, key: usize) -> bool {
        match self {
            ViewSlot::Memory(store) => store.finish(key),
            ViewSlot::Backend(store) => store.finish(key),
        }
    }

    pub fn clear(&mut self, key: usize) {
        match self {
            ViewSlot::Memory(store) => store.clear(key),
            ViewSlot::Backend(store) => store.clear(key),
        }
    }

    pub fn is_absent(&self, key: usize) -> bool {
        match self {
            ViewSlot::Memory(store) => store.is_absent(key),
            ViewSlot::Backend(store) => store.is_absent(key),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            ViewSlot::Memory(store) => store.len(),
            ViewSlot::Backend(store) => store.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where a processor keeps its keyed state.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StateBackend {
    /// Typed values in memory, no serialization on access.
    #[default]
    InMemory,
}

impl StateBackend {
    /// The store of a value state entry.
    pub fn values<T: StateValue>(self, spec: &StateSpec) -> ValueSlot<T> {
        match self {
            StateBackend::InMemory => ValueSlot::Memory(ValueStore::<T>::new(spec)),
        }
    }

    /// The store of a `ListView` entry.
    pub fn lists<T: StateItem>(self, spec: &StateSpec) -> ViewSlot<ListView<T>> {
        match self {
            StateBackend::InMemory => ViewSlot::Memory(ViewStore::<ListView<T>>::new(spec)),
        }
    }

    /// The store of a `MapView` entry.
    pub fn maps<K: StateKey, V: StateItem>(self, spec: &StateSpec) -> ViewSlot<MapView<K, V>> {
        match self {
            StateBackend::InMemory => ViewSlot::Memory(ViewStore::<MapView<K, V>>::new(spec)),
        }
    }
}
