//! `ListView`: in memory, a vector of stamped elements; kept in a store, one item per
//! element under its position (so the store's order is the list's order), appended and
//! streamed one by one.

use super::super::StateItem;
use super::super::items::{Items, LiveItems};
use super::super::stores::decode;
use super::super::ttl::{Stamped, Ttl};

/// List state as a view: elements are added, read and removed one at a time (Flink's
/// `ListView`). Each element expires on its own.
///
/// With the disk backend every element lives in the store: `add` writes one, and iterating
/// streams them from the store.
#[derive(Debug)]
pub struct ListView<T> {
    entries: Vec<Stamped<T>>,
    ttl: Ttl,
    now: i64,
    stored: Option<Box<StoredList>>,
}

/// A list kept in a store, and the position its next element takes (read from the store at
/// a call's first `add`).
#[derive(Debug)]
struct StoredList {
    items: Items,
    next: Option<u64>,
}

impl<T> Default for ListView<T> {
    fn default() -> Self {
        ListView {
            entries: Vec::new(),
            ttl: Ttl::default(),
            now: 0,
            stored: None,
        }
    }
}

impl<T: StateItem> ListView<T> {
    /// The live elements (copies), oldest first; with the disk backend, streamed from the
    /// store.
    pub fn iter(&mut self) -> ListElements<'_, T> {
        let inner = match &mut self.stored {
            Some(list) => Inner::Stored(list.items.live()),
            None => Inner::Memory {
                entries: self.entries.iter(),
                ttl: self.ttl,
                now: self.now,
            },
        };
        ListElements { inner }
    }

    /// A copy of the live elements (Flink's `getList()`).
    pub fn to_vec(&mut self) -> Vec<T> {
        self.iter().collect()
    }

    pub fn add(&mut self, value: T) {
        if let Some(list) = &mut self.stored {
            list.add(&value);
            return;
        }
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
        if let Some(list) = &mut self.stored {
            return list.remove(value);
        }
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
        if let Some(list) = &mut self.stored {
            list.items.delete_all();
            list.next = None;
        }
        self.entries.clear();
    }

    /// The number of live elements (with the disk backend, counted in the store).
    pub fn len(&mut self) -> usize {
        match &mut self.stored {
            Some(list) => list.items.live().count(),
            None => self.live().count(),
        }
    }

    pub fn is_empty(&mut self) -> bool {
        match &mut self.stored {
            Some(list) => list.items.live().next().is_none(),
            None => self.live().next().is_none(),
        }
    }

    fn live(&self) -> impl Iterator<Item = &Stamped<T>> {
        let (ttl, now) = (self.ttl, self.now);
        self.entries
            .iter()
            .filter(move |e| !ttl.expired(e.written, now))
    }
}

impl StoredList {
    fn add<T: StateItem>(&mut self, value: &T) {
        let next = match self.next {
            Some(next) => next,
            None => match self.items.last() {
                Some(last) => position(&last).map_or(0, |p| p + 1),
                None if self.items.failed() => return,
                None => 0,
            },
        };
        self.items.item.clear();
        self.items.item.extend_from_slice(&next.to_be_bytes());
        if self.items.encode_value(value) {
            self.items.put(self.items.now);
            self.next = Some(next + 1);
        }
    }

    fn remove<T: StateItem + PartialEq>(&mut self, value: &T) -> bool {
        let mut found = None;
        let mut live = self.items.live();
        for item in live.by_ref() {
            match decode::<T>(&item.value) {
                Ok(element) if &element == value => {
                    found = Some(item.item);
                    break;
                }
                Ok(_) => {}
                Err(error) => {
                    live.fail(error);
                    break;
                }
            }
        }
        drop(live);
        match found {
            Some(item) => {
                self.items.delete_item(&item);
                true
            }
            None => false,
        }
    }
}

/// An element's position from its item bytes.
fn position(item: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(item.try_into().ok()?))
}

/// A list view's live elements.
pub struct ListElements<'a, T> {
    inner: Inner<'a, T>,
}

enum Inner<'a, T> {
    Memory {
        entries: std::slice::Iter<'a, Stamped<T>>,
        ttl: Ttl,
        now: i64,
    },
    Stored(LiveItems<'a>),
}

impl<T: StateItem> Iterator for ListElements<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match &mut self.inner {
            Inner::Memory { entries, ttl, now } => entries
                .find(|e| !ttl.expired(e.written, *now))
                .map(|e| e.value.clone()),
            Inner::Stored(live) => {
                let item = live.next()?;
                match decode::<T>(&item.value) {
                    Ok(element) => Some(element),
                    Err(error) => {
                        live.fail(error);
                        None
                    }
                }
            }
        }
    }
}

impl<T> ListView<T> {
    pub(super) fn prepare(&mut self, ttl: Option<i64>, now: i64) {
        self.ttl = Ttl(ttl);
        self.now = now;
    }

    pub(super) fn purge(&mut self) {
        let (ttl, now) = (self.ttl, self.now);
        self.entries.retain(|e| !ttl.expired(e.written, now));
    }

    pub(super) fn clear_memory(&mut self) {
        self.entries = Vec::new();
    }

    pub(super) fn is_empty_in_memory(&self) -> bool {
        self.entries.is_empty()
    }

    pub(super) fn memory_entries(&self) -> &[Stamped<T>] {
        &self.entries
    }

    pub(super) fn memory_entries_mut(&mut self) -> &mut Vec<Stamped<T>> {
        &mut self.entries
    }

    /// A view of the items `items` keeps.
    pub(super) fn stored(items: Items) -> Self {
        ListView {
            ttl: items.ttl,
            stored: Some(Box::new(StoredList { items, next: None })),
            ..ListView::default()
        }
    }

    pub(super) fn items_mut(&mut self) -> Option<&mut Items> {
        self.stored.as_deref_mut().map(|list| &mut list.items)
    }

    /// A stored view after its call: the next position is read again by the next call (it
    /// may be another key's).
    pub(super) fn forget_reads(&mut self) {
        if let Some(list) = &mut self.stored {
            list.next = None;
        }
    }
}
