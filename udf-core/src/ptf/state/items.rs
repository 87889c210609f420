//! The seam between views and a store that keeps their items one by one (the runtime's disk
//! backend implements [`ItemStore`]). A view kept this way reads an item when it is asked for
//! and writes it when it changes; iterating streams the store.
//!
//! An item is named by its state entry, its partition key's bytes and its own bytes: a map
//! key's serialized form (so two map keys are the same item when their encodings are equal,
//! as in Flink's RocksDB backend) or a list element's position. Each item keeps when it was
//! written, for TTL.

use std::sync::Arc;

use super::ttl::Ttl;
use crate::Error;

/// One item as the store holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredItem {
    /// A map key's encoding, or a list element's position (big-endian `u64`).
    pub item: Vec<u8>,
    /// When it was written (processing time, ms).
    pub written: i64,
    /// The value's (or element's) encoding.
    pub value: Vec<u8>,
}

/// A processor's store of view items, shared by its view entries.
pub trait ItemStore: Send + Sync {
    /// Item `item` of entry `entry` of `key`: when it was written, and its value into `out`
    /// (cleared first).
    fn get(
        &self,
        entry: u16,
        key: &[u8],
        item: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<i64>, Error>;

    fn put(
        &self,
        entry: u16,
        key: &[u8],
        item: &[u8],
        written: i64,
        value: &[u8],
    ) -> Result<(), Error>;

    fn delete(&self, entry: u16, key: &[u8], item: &[u8]) -> Result<(), Error>;

    /// The items of entry `entry` of `key`, in item order, read as the iteration goes.
    fn scan<'a>(
        &'a self,
        entry: u16,
        key: &[u8],
    ) -> Box<dyn Iterator<Item = Result<StoredItem, Error>> + 'a>;

    /// The greatest item of entry `entry` of `key`, if it has any.
    fn last(&self, entry: u16, key: &[u8]) -> Result<Option<Vec<u8>>, Error>;
}

/// What a stored view works through: the store, its entry, the key of the call, and the
/// first failure of the call (a view's accessors return no `Result`: a failed read is kept
/// here, the view writes nothing more, and the call fails when it ends).
pub struct Items {
    store: Arc<dyn ItemStore>,
    entry: u16,
    pub(crate) key: Vec<u8>,
    pub(crate) ttl: Ttl,
    pub(crate) now: i64,
    failure: Option<Error>,
    /// Encodings, reused.
    pub(crate) item: Vec<u8>,
    pub(crate) value: Vec<u8>,
}

impl std::fmt::Debug for Items {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Items")
            .field("entry", &self.entry)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl Items {
    pub(crate) fn new(store: Arc<dyn ItemStore>, entry: u16, ttl: Ttl) -> Self {
        Items {
            store,
            entry,
            key: Vec::new(),
            ttl,
            now: 0,
            failure: None,
            item: Vec::new(),
            value: Vec::new(),
        }
    }

    pub(crate) fn start_call(&mut self, key: &[u8], now: i64) {
        self.failure = None;
        self.key.clear();
        self.key.extend_from_slice(key);
        self.now = now;
    }

    /// The call's first failure, if it had one (taken: the next call starts clean).
    pub(crate) fn take_failure(&mut self) -> Result<(), Error> {
        self.failure.take().map_or(Ok(()), Err)
    }

    /// Whether an earlier step of this call failed (nothing more is written then).
    pub(crate) fn failed(&self) -> bool {
        self.failure.is_some()
    }

    /// Keeps the first failure; `None` stands for what could not be had.
    pub(crate) fn keep<T>(&mut self, outcome: Result<T, Error>) -> Option<T> {
        match outcome {
            Ok(value) => Some(value),
            Err(error) => {
                self.failure.get_or_insert(error);
                None
            }
        }
    }

    /// The live value of the item encoded in `self.item`, into `self.value`: its stamp.
    pub(crate) fn get(&mut self) -> Option<i64> {
        if self.failed() {
            return None;
        }
        let outcome = self
            .store
            .get(self.entry, &self.key, &self.item, &mut self.value);
        let written = self.keep(outcome)??;
        (!self.ttl.expired(written, self.now)).then_some(written)
    }

    /// Writes `self.value` as the item encoded in `self.item`, stamped `written`.
    pub(crate) fn put(&mut self, written: i64) {
        if self.failed() {
            return;
        }
        let outcome = self
            .store
            .put(self.entry, &self.key, &self.item, written, &self.value);
        self.keep(outcome);
    }

    /// Encodes `item` into `self.item`; whether it encoded.
    pub(crate) fn encode_item<Q: serde::Serialize + ?Sized>(&mut self, item: &Q) -> bool {
        let outcome = encode_into(item, &mut self.item);
        self.keep(outcome).is_some()
    }

    /// Encodes `value` into `self.value`; whether it encoded.
    pub(crate) fn encode_value<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> bool {
        let outcome = encode_into(value, &mut self.value);
        self.keep(outcome).is_some()
    }

    /// Deletes the item encoded in `self.item`.
    pub(crate) fn delete(&mut self) {
        if self.failed() {
            return;
        }
        let outcome = self.store.delete(self.entry, &self.key, &self.item);
        self.keep(outcome);
    }

    pub(crate) fn delete_item(&mut self, item: &[u8]) {
        if self.failed() {
            return;
        }
        let outcome = self.store.delete(self.entry, &self.key, item);
        self.keep(outcome);
    }

    /// The greatest item of the key.
    pub(crate) fn last(&mut self) -> Option<Vec<u8>> {
        if self.failed() {
            return None;
        }
        let outcome = self.store.last(self.entry, &self.key);
        self.keep(outcome)?
    }

    /// The key's live items, streamed; a failure ends the stream and is kept.
    pub(crate) fn live(&mut self) -> LiveItems<'_> {
        let scan = (!self.failed()).then(|| self.store.scan(self.entry, &self.key));
        LiveItems {
            scan,
            ttl: self.ttl,
            now: self.now,
            failure: &mut self.failure,
        }
    }

    /// Deletes every item of the key.
    pub(crate) fn delete_all(&mut self) {
        // In chunks: the scan reads a snapshot, the deletes follow it.
        const CHUNK: usize = 4096;
        loop {
            if self.failed() {
                return;
            }
            let mut chunk = Vec::with_capacity(CHUNK);
            let mut failure = None;
            for item in self.store.scan(self.entry, &self.key).take(CHUNK) {
                match item {
                    Ok(item) => chunk.push(item.item),
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
            if let Some(error) = failure {
                self.failure.get_or_insert(error);
                return;
            }
            let done = chunk.len() < CHUNK;
            for item in &chunk {
                self.delete_item(item);
            }
            if done {
                return;
            }
        }
    }

    /// The key's live items as a snapshot saves the view (postcard: a list is
    /// `[(written, element)]`, a map `[(key, written, value)]`, which the items' own encodings
    /// spell when put one after the other); `false`, writing nothing, if none is live.
    pub(crate) fn save(&mut self, map: bool, out: &mut Vec<u8>) -> Result<bool, Error> {
        let items: Vec<StoredItem> = self.live().collect();
        self.take_failure()?;
        Ok(save_items(&items, map, out))
    }
}

/// `value` in place of `out`'s bytes.
fn encode_into<T: serde::Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> Result<(), Error> {
    out.clear();
    *out = postcard::to_extend(value, std::mem::take(out))
        .map_err(|e| Error::msg(format!("a view item could not be encoded: {e}")))?;
    Ok(())
}

/// `items` (all live) in a snapshot's view encoding (see [`Items::save`]); `false` for none.
pub fn save_items(items: &[StoredItem], map: bool, out: &mut Vec<u8>) -> bool {
    if items.is_empty() {
        return false;
    }
    let mut buffer = [0u8; 10];
    let count =
        postcard::to_slice(&(items.len() as u64), &mut buffer).expect("a varint fits ten bytes");
    out.extend_from_slice(count);
    for item in items {
        if map {
            out.extend_from_slice(&item.item);
        }
        let written =
            postcard::to_slice(&item.written, &mut buffer).expect("a varint fits ten bytes");
        out.extend_from_slice(written);
        out.extend_from_slice(&item.value);
    }
    true
}

/// A stored view's live items, in item order.
pub(crate) struct LiveItems<'a> {
    scan: Option<Box<dyn Iterator<Item = Result<StoredItem, Error>> + 'a>>,
    ttl: Ttl,
    now: i64,
    failure: &'a mut Option<Error>,
}

impl LiveItems<'_> {
    /// Ends the stream with `error` (an item that does not decode), kept as the call's failure.
    pub(crate) fn fail(&mut self, error: Error) {
        self.failure.get_or_insert(error);
        self.scan = None;
    }
}

impl Iterator for LiveItems<'_> {
    type Item = StoredItem;

    fn next(&mut self) -> Option<StoredItem> {
        loop {
            match self.scan.as_mut()?.next()? {
                Ok(item) if self.ttl.expired(item.written, self.now) => continue,
                Ok(item) => return Some(item),
                Err(error) => {
                    self.failure.get_or_insert(error);
                    self.scan = None;
                    return None;
                }
            }
        }
    }
}
