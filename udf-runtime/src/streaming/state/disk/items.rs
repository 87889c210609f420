//! The items of list and map views with the disk backend: what a stored view reads and writes
//! one item at a time. The items in use stay in memory (`item_cache.rs`) and reach the store
//! (`layout.rs` spells their keys) when they leave the cache; a read the cache cannot answer
//! goes to the store.

use std::cmp::Ordering;
use std::sync::{Mutex, MutexGuard};

use datafusion::common::{DataFusionError, Result};
use udf_core::Error;
use udf_core::ptf::{ItemStore, StoredItem};

use super::item_cache::{ItemCache, ItemCounts, Lookup};
use super::layout::{StoreKey, split_stamp};
use super::store::ProcessorStore;
use super::write_set::WriteSet;

pub struct ViewItems {
    store: ProcessorStore,
    /// Calls of one processor come one at a time, so the lock is never contended.
    inner: Mutex<Inner>,
}

struct Inner {
    cache: ItemCache,
    /// A store key under construction (reused).
    key: StoreKey,
    /// The changed items leaving the cache (reused).
    writes: WriteSet,
}

impl ViewItems {
    /// The views' items in `store`, with a cache of about `budget` bytes in front.
    /// The store the items are written back to.
    pub fn store(&self) -> &ProcessorStore {
        &self.store
    }

    pub fn new(store: ProcessorStore, budget: u64) -> Self {
        ViewItems {
            store,
            inner: Mutex::new(Inner {
                cache: ItemCache::new(budget),
                key: StoreKey::default(),
                writes: WriteSet::default(),
            }),
        }
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn counts(&self) -> ItemCounts {
        self.inner().cache.counts()
    }

    /// Writes every changed item to the store, so that reading the store directly (a
    /// snapshot, the test harness) sees them.
    pub fn write_back(&self) -> Result<()> {
        let mut inner = self.inner();
        let Inner { cache, writes, .. } = &mut *inner;
        cache.write_back_all(writes);
        if writes.is_empty() {
            return Ok(());
        }
        writes.commit(&self.store)
    }

    /// Drops the cached items of entry `entry` of `key` — after [`ViewItems::write_back`],
    /// when the store's are removed directly.
    pub fn forget(&self, entry: u16, key: &[u8]) {
        let mut inner = self.inner();
        let Inner {
            cache, key: buffer, ..
        } = &mut *inner;
        cache.forget(buffer.items(entry, key));
    }

    /// Once the cache holds more than its budget, the least recently used items leave it.
    fn settle(&self, inner: &mut Inner) -> Result<()> {
        if !inner.cache.over_budget() {
            return Ok(());
        }
        inner.cache.evict(&mut inner.writes);
        inner.writes.commit(&self.store)
    }
}

fn failed(error: DataFusionError) -> Error {
    Error::msg(error.to_string())
}

fn cut_short() -> Error {
    Error::msg("an item in the state store is cut short (the store is damaged)")
}

impl ItemStore for ViewItems {
    fn get(
        &self,
        entry: u16,
        key: &[u8],
        item: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<i64>, Error> {
        let mut inner = self.inner();
        let Inner {
            cache, key: buffer, ..
        } = &mut *inner;
        // Built once: the cache looks it up, the store reads it on a miss.
        let store_key = buffer.item(entry, key, item);
        let prefix_len = store_key.len() - item.len();
        match cache.lookup(store_key, prefix_len) {
            Lookup::Cached(Some((written, value))) => {
                out.clear();
                out.extend_from_slice(value);
                return Ok(Some(written));
            }
            Lookup::Cached(None) | Lookup::Missing => return Ok(None),
            Lookup::Unknown => {}
        }
        let found = self.store.get(store_key).map_err(failed)?;
        let prefix = &store_key[..prefix_len];
        let written = match &found {
            Some(value) => {
                let (written, payload) = split_stamp(value).ok_or_else(cut_short)?;
                cache.remember(prefix, item, Some((written, payload)));
                out.clear();
                out.extend_from_slice(payload);
                Some(written)
            }
            None => {
                cache.remember(prefix, item, None);
                None
            }
        };
        self.settle(&mut inner).map_err(failed)?;
        Ok(written)
    }

    fn put(
        &self,
        entry: u16,
        key: &[u8],
        item: &[u8],
        written: i64,
        value: &[u8],
    ) -> Result<(), Error> {
        let mut inner = self.inner();
        let Inner {
            cache, key: buffer, ..
        } = &mut *inner;
        cache.write(buffer.items(entry, key), item, Some((written, value)));
        self.settle(&mut inner).map_err(failed)
    }

    fn delete(&self, entry: u16, key: &[u8], item: &[u8]) -> Result<(), Error> {
        let mut inner = self.inner();
        let Inner {
            cache, key: buffer, ..
        } = &mut *inner;
        cache.write(buffer.items(entry, key), item, None);
        self.settle(&mut inner).map_err(failed)
    }

    fn scan<'a>(
        &'a self,
        entry: u16,
        key: &[u8],
    ) -> Box<dyn Iterator<Item = Result<StoredItem, Error>> + 'a> {
        let prefix = StoreKey::default().items(entry, key).to_vec();
        // A copy of the cached ones: the caller may change items before the scan ends.
        let (cached, on_disk) = self.inner().cache.items(&prefix);
        let cached = cached.into_iter();
        if !on_disk {
            return Box::new(cached.filter_map(|(item, value)| {
                let (written, value) = value?;
                Some(Ok(StoredItem {
                    item,
                    written,
                    value,
                }))
            }));
        }
        let start = prefix.len();
        let stored = self.store.scan(&prefix).map(move |found| {
            let (store_key, value) = found.map_err(failed)?;
            let (written, payload) = split_stamp(&value).ok_or_else(cut_short)?;
            Ok(StoredItem {
                item: store_key[start..].to_vec(),
                written,
                value: payload.to_vec(),
            })
        });
        Box::new(Merged {
            cached: cached.peekable(),
            stored: stored.peekable(),
        })
    }

    fn last(&self, entry: u16, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let prefix = StoreKey::default().items(entry, key).to_vec();
        let (cached, on_disk) = self.inner().cache.last(&prefix);
        if !on_disk {
            return Ok(cached.map(Vec::from));
        }
        let stored = self
            .store
            .last_key(&prefix)
            .map_err(failed)?
            .map(|store_key| store_key[prefix.len()..].to_vec());
        let Some(stored) = stored else {
            return Ok(cached.map(Vec::from));
        };
        if self.inner().cache.is_removed(&prefix, &stored) {
            // The store's greatest item is gone: the one before it may be too.
            return match self.scan(entry, key).last() {
                Some(item) => item.map(|item| Some(item.item)),
                None => Ok(None),
            };
        }
        Ok(Some(match cached {
            Some(cached) if *cached > *stored => cached.into_vec(),
            _ => stored,
        }))
    }
}

/// A key's items: the cached ones in place of the store's, in item order.
struct Merged<C: Iterator, S: Iterator> {
    cached: std::iter::Peekable<C>,
    stored: std::iter::Peekable<S>,
}

impl<C, S> Iterator for Merged<C, S>
where
    C: Iterator<Item = (Vec<u8>, Option<(i64, Vec<u8>)>)>,
    S: Iterator<Item = Result<StoredItem, Error>>,
{
    type Item = Result<StoredItem, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let order = match (self.cached.peek(), self.stored.peek()) {
                (_, Some(Err(_))) => return self.stored.next(),
                (None, None) => return None,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some((cached, _)), Some(Ok(stored))) => cached.cmp(&stored.item),
            };
            match order {
                Ordering::Greater => return self.stored.next(),
                // The cached item stands in for the store's.
                Ordering::Equal => drop(self.stored.next()),
                Ordering::Less => {}
            }
            let (item, value) = self.cached.next()?;
            if let Some((written, value)) = value {
                return Some(Ok(StoredItem {
                    item,
                    written,
                    value,
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::streaming::state::disk::store::test_store;

    /// (entry, key, item) → (written, value): what the views should read.
    type Model = BTreeMap<(u16, Vec<u8>, Vec<u8>), (i64, Vec<u8>)>;

    fn random(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    fn scanned(views: &ViewItems, entry: u16, key: &[u8]) -> Vec<(Vec<u8>, i64, Vec<u8>)> {
        views
            .scan(entry, key)
            .map(|item| item.map(|i| (i.item, i.written, i.value)))
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn modelled(model: &Model, entry: u16, key: &[u8]) -> Vec<(Vec<u8>, i64, Vec<u8>)> {
        model
            .iter()
            .filter(|((e, k, _), _)| *e == entry && k == key)
            .map(|((_, _, item), (written, value))| (item.clone(), *written, value.clone()))
            .collect()
    }

    /// Random puts, removals, reads, scans and last items, checked against a model, with a
    /// cache that holds nothing, a little, and everything.
    #[test]
    fn items_read_back_as_written_whatever_the_cache_holds() {
        for budget in [0, 256 << 10, 64 << 20] {
            let run = test_store(&format!("view-items-{budget}"), vec![None, None]);
            let views = ViewItems::new(run.processor(0).unwrap(), budget);
            let mut model = Model::new();
            let mut state = 0x2545_f491_4f6c_dd1d_u64;
            let mut out = Vec::new();
            for step in 0..30_000i64 {
                let r = random(&mut state);
                let entry = (r % 2) as u16;
                let key = format!("key{}", (r >> 8) % 64).into_bytes();
                let item = vec![b'i', ((r >> 16) % 40) as u8];
                let at = (entry, key.clone(), item.clone());
                match (r >> 32) % 12 {
                    0..=4 => {
                        let value = step.to_le_bytes()[..1 + (r >> 40) as usize % 8].to_vec();
                        views.put(entry, &key, &item, step, &value).unwrap();
                        model.insert(at, (step, value));
                    }
                    5 | 6 => {
                        views.delete(entry, &key, &item).unwrap();
                        model.remove(&at);
                    }
                    7..=9 => {
                        let written = views.get(entry, &key, &item, &mut out).unwrap();
                        let expected = model.get(&at);
                        assert_eq!(written, expected.map(|e| e.0), "step {step}");
                        if let Some((_, value)) = expected {
                            assert_eq!(&out, value, "step {step}");
                        }
                    }
                    10 => assert_eq!(
                        scanned(&views, entry, &key),
                        modelled(&model, entry, &key),
                        "step {step}"
                    ),
                    _ => assert_eq!(
                        views.last(entry, &key).unwrap(),
                        modelled(&model, entry, &key).pop().map(|(item, _, _)| item),
                        "step {step}"
                    ),
                }
            }
            let counts = views.counts();
            let written = views.store().totals().bytes_written;
            if budget == 64 << 20 {
                assert_eq!((counts.misses, written), (0, 0), "all of it in memory");
            } else {
                assert!(
                    counts.written_back > 0 && counts.misses > 0 && written > 0,
                    "{counts:?}, {written} bytes written"
                );
            }
            // Written back, the store holds what the model does.
            views.write_back().unwrap();
            let store = run.processor(0).unwrap();
            let in_store = store
                .scan(&[])
                .map(|found| found.unwrap())
                .filter(|(key, _)| key.first() == Some(&2))
                .count();
            assert_eq!(in_store, model.len());
        }
    }
}
