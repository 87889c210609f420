//! Views kept item by item in a store (the disk backend's list and map entries): one view,
//! bound to the key of each call; nothing is held per key in memory. The runtime binds a
//! slot to its key's bytes when it hands the slot out, so the items are found by key bytes,
//! never by slot.

use std::sync::Arc;

use super::ViewStates;
use super::items::{ItemStore, Items};
use super::stores::EntryStore;
use super::ttl::Ttl;
use super::views::SavedView;
use crate::Error;
use crate::spec::StateSpec;

pub struct StoredViews<V> {
    /// The one view every call gets, bound to the call's key.
    view: V,
    /// Each slot's key bytes, while the slot is bound.
    keys: Vec<Option<Box<[u8]>>>,
    ttl: Ttl,
    name: String,
    /// For reads outside the calls (saving an entry), which take no view.
    store: Arc<dyn ItemStore>,
    entry: u16,
}

impl<V: SavedView> StoredViews<V> {
    /// The items of entry `entry` (`spec`) in `store`.
    pub fn new(spec: &StateSpec, store: Arc<dyn ItemStore>, entry: u16) -> Self {
        let ttl = Ttl::of(spec);
        StoredViews {
            view: V::stored(Items::new(store.clone(), entry, ttl)),
            keys: Vec::new(),
            ttl,
            name: spec.name.clone(),
            store,
            entry,
        }
    }

    /// The view's items, bound to `slot`'s key as of `now`.
    fn items_of(&mut self, slot: u32, now: i64) -> &mut Items {
        let key = self.keys.get(slot as usize).and_then(Option::as_deref);
        let items = self.view.items_mut().expect("a stored view has items");
        match key {
            Some(key) => items.start_call(key, now),
            None => {
                items.start_call(&[], now);
                items.keep::<()>(Err(Error::msg(format!(
                    "key slot {slot} was used before the runtime bound it to a key"
                ))));
            }
        }
        items
    }

    /// The call's failure, naming the entry.
    fn settle(&mut self) -> Result<(), Error> {
        let items = self.view.items_mut().expect("a stored view has items");
        items
            .take_failure()
            .map_err(|e| Error::msg(format!("state entry `{}`: {e}", self.name)))
    }
}

impl<V: SavedView + Send + 'static> ViewStates<V> for StoredViews<V> {
    fn view(&mut self, key: usize, now: i64) -> &mut V {
        // A call that failed did not finish: what it read is not this key's.
        self.view.forget_reads();
        self.items_of(key as u32, now);
        self.view.prepare(self.ttl.0, now);
        &mut self.view
    }

    fn finish(&mut self, _key: usize) -> Result<bool, Error> {
        self.view.forget_reads();
        self.settle()?;
        Ok(true)
    }
}

impl<V: SavedView + Send + 'static> EntryStore for StoredViews<V> {
    /// Nothing is held in memory for a slot: its items are in the store by key bytes.
    fn is_absent(&self, _slot: u32) -> bool {
        true
    }

    fn clear(&mut self, slot: u32) -> Result<(), Error> {
        // The time only matters for TTL, which deleting does not look at.
        self.items_of(slot, 0).delete_all();
        self.settle()
    }

    fn bind(&mut self, slot: u32, key: &[u8]) {
        let slot = slot as usize;
        if self.keys.len() <= slot {
            self.keys.resize(slot + 1, None);
        }
        self.keys[slot] = Some(key.into());
    }

    fn release(&mut self, slot: u32) {
        if let Some(key) = self.keys.get_mut(slot as usize) {
            *key = None;
        }
    }

    /// Entries held in memory: none.
    fn len(&self) -> usize {
        0
    }

    fn occupied(&self) -> Vec<u32> {
        Vec::new()
    }

    fn save(&self, slot: u32, now: i64, out: &mut Vec<u8>) -> Result<bool, Error> {
        let Some(key) = self.keys.get(slot as usize).and_then(Option::as_deref) else {
            return Ok(false);
        };
        let mut items = Items::new(self.store.clone(), self.entry, self.ttl);
        items.start_call(key, now);
        items
            .save(V::MAP, out)
            .map_err(|e| Error::msg(format!("state entry `{}`: {e}", self.name)))
    }

    fn restore(&mut self, slot: u32, bytes: &[u8]) -> Result<(), Error> {
        self.items_of(slot, 0);
        self.view.restore_items(bytes)?;
        self.settle()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::ptf::state::{ListView, MapView, StoredItem};
    use crate::spec::StateKind;

    /// (entry, key, item) → (written, value).
    type ItemMap = BTreeMap<(u16, Vec<u8>, Vec<u8>), (i64, Vec<u8>)>;

    /// Items in a sorted map, counting what is read; a key starting with `fail` fails.
    #[derive(Default)]
    struct TestItems {
        items: Mutex<ItemMap>,
        gets: AtomicUsize,
        scans: AtomicUsize,
    }

    fn check(key: &[u8]) -> Result<(), Error> {
        if key.starts_with(b"fail") {
            return Err(Error::msg("the disk is full"));
        }
        Ok(())
    }

    impl ItemStore for TestItems {
        fn get(
            &self,
            entry: u16,
            key: &[u8],
            item: &[u8],
            out: &mut Vec<u8>,
        ) -> Result<Option<i64>, Error> {
            check(key)?;
            self.gets.fetch_add(1, Ordering::Relaxed);
            let items = self.items.lock().unwrap();
            Ok(items
                .get(&(entry, key.to_vec(), item.to_vec()))
                .map(|(written, value)| {
                    out.clone_from(value);
                    *written
                }))
        }

        fn put(
            &self,
            entry: u16,
            key: &[u8],
            item: &[u8],
            written: i64,
            value: &[u8],
        ) -> Result<(), Error> {
            check(key)?;
            let mut items = self.items.lock().unwrap();
            items.insert(
                (entry, key.to_vec(), item.to_vec()),
                (written, value.to_vec()),
            );
            Ok(())
        }

        fn delete(&self, entry: u16, key: &[u8], item: &[u8]) -> Result<(), Error> {
            check(key)?;
            let mut items = self.items.lock().unwrap();
            items.remove(&(entry, key.to_vec(), item.to_vec()));
            Ok(())
        }

        fn scan<'a>(
            &'a self,
            entry: u16,
            key: &[u8],
        ) -> Box<dyn Iterator<Item = Result<StoredItem, Error>> + 'a> {
            self.scans.fetch_add(1, Ordering::Relaxed);
            let items = self.items.lock().unwrap();
            let found: Vec<_> = items
                .iter()
                .filter(|((e, k, _), _)| *e == entry && k == key)
                .map(|((_, _, item), (written, value))| {
                    Ok(StoredItem {
                        item: item.clone(),
                        written: *written,
                        value: value.clone(),
                    })
                })
                .collect();
            Box::new(found.into_iter())
        }

        fn last(&self, entry: u16, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
            check(key)?;
            let items = self.items.lock().unwrap();
            Ok(items
                .keys()
                .filter(|(e, k, _)| *e == entry && k == key)
                .map(|(_, _, item)| item.clone())
                .next_back())
        }
    }

    fn spec(kind: StateKind, ttl: Option<u64>) -> StateSpec {
        StateSpec {
            name: "seen".into(),
            kind,
            rust_type: String::new(),
            data_type: None,
            ttl: ttl.map(Duration::from_millis),
        }
    }

    fn maps(store: &Arc<TestItems>, ttl: Option<u64>) -> StoredViews<MapView<String, i64>> {
        let mut views = StoredViews::new(&spec(StateKind::Map, ttl), store.clone(), 0);
        views.bind(0, b"a");
        views.bind(1, b"b");
        views
    }

    #[test]
    fn a_map_get_reads_one_item_and_a_get_then_put_reads_once() {
        let store = Arc::new(TestItems::default());
        let mut views = maps(&store, None);
        let view = views.view(0, 0);
        for i in 0..100 {
            view.put(format!("e{i}"), i);
        }
        views.finish(0).unwrap();
        assert_eq!(store.items.lock().unwrap().len(), 100);

        let view = views.view(0, 1);
        let count = view.get("e7").copied().unwrap_or(0);
        view.put("e7".into(), count + 1);
        assert_eq!(view.get("e7"), Some(&8), "the put is seen by the same call");
        assert_eq!(view.get("nope"), None);
        assert_eq!(store.gets.load(Ordering::Relaxed), 2, "e7 once, nope once");
        assert_eq!(store.scans.load(Ordering::Relaxed), 0, "no scan for gets");
        views.finish(0).unwrap();

        // Another key's items are its own.
        let view = views.view(1, 2);
        assert_eq!(view.get("e7"), None);
        assert!(view.is_empty());
        views.finish(1).unwrap();

        let view = views.view(0, 3);
        assert_eq!(view.get("e7"), Some(&8), "written through");
        view.remove("e7");
        assert!(!view.contains("e7"));
        assert_eq!(view.len(), 99);
        let mut keys: Vec<String> = view.keys().collect();
        keys.sort();
        assert_eq!(keys.first().map(String::as_str), Some("e0"));
        view.clear();
        assert!(view.is_empty());
        views.finish(0).unwrap();
        assert!(store.items.lock().unwrap().is_empty());
    }

    #[test]
    fn stored_map_items_expire_one_by_one_and_save_as_memory_views_do() {
        let store = Arc::new(TestItems::default());
        let mut views = maps(&store, Some(100));
        views.view(0, 0).put("x".into(), 1);
        views.finish(0).unwrap();
        views.view(0, 60).put("y".into(), 2);
        views.finish(0).unwrap();
        let view = views.view(0, 100);
        assert_eq!(view.get("x"), None, "written at 0, gone at 100");
        assert_eq!(view.get("y"), Some(&2));
        assert_eq!(view.iter().collect::<Vec<_>>(), [("y".to_owned(), 2)]);
        views.finish(0).unwrap();

        // The saved form is the in-memory store's: it restores into one.
        let mut saved = Vec::new();
        assert!(views.save(0, 100, &mut saved).unwrap());
        let mut memory = crate::ptf::state::ViewStore::<MapView<String, i64>>::new(&spec(
            StateKind::Map,
            Some(100),
        ));
        EntryStore::restore(&mut memory, 3, &saved).unwrap();
        let view = memory.view(3, 150);
        assert_eq!(view.get("y"), Some(&2));
        assert_eq!(view.get("y"), Some(&2));
        assert_eq!(memory.view(3, 160).get("y"), None, "the stamp came along");

        // And back into a stored view, under another key.
        views.bind(2, b"c");
        views.restore(2, &saved).unwrap();
        assert_eq!(views.view(2, 150).get("y"), Some(&2));
        views.finish(2).unwrap();
        assert!(
            !views.save(2, 160, &mut Vec::new()).unwrap(),
            "expired by 160"
        );
    }

    #[test]
    fn a_stored_list_keeps_its_order_across_calls() {
        let store = Arc::new(TestItems::default());
        let mut lists: StoredViews<ListView<i64>> =
            StoredViews::new(&spec(StateKind::List, None), store.clone(), 1);
        lists.bind(0, b"a");
        for call in 0..3 {
            let view = lists.view(0, call);
            view.add(call * 10);
            view.add(call * 10 + 1);
            lists.finish(0).unwrap();
        }
        let view = lists.view(0, 3);
        assert_eq!(view.to_vec(), [0, 1, 10, 11, 20, 21]);
        assert!(view.remove(&10));
        assert!(!view.remove(&99));
        view.add(30);
        assert_eq!(view.to_vec(), [0, 1, 11, 20, 21, 30]);
        assert_eq!(view.len(), 6);
        view.clear();
        view.add(5);
        assert_eq!(view.to_vec(), [5]);
        lists.finish(0).unwrap();
    }

    #[test]
    fn a_failed_read_writes_nothing_more_and_fails_the_call_naming_the_entry() {
        let store = Arc::new(TestItems::default());
        let mut views = maps(&store, None);
        views.bind(5, b"fail-here");
        let view = views.view(5, 0);
        assert_eq!(view.get("x"), None);
        view.put("x".into(), 1);
        let error = views.finish(5).unwrap_err().to_string();
        assert!(
            error.contains("state entry `seen`") && error.contains("the disk is full"),
            "{error}"
        );
        // The next call starts clean.
        views.view(0, 1).put("x".into(), 1);
        views.finish(0).unwrap();

        // A slot never bound is an error, not another key's items.
        views.view(9, 2).put("x".into(), 2);
        let error = views.finish(9).unwrap_err().to_string();
        assert!(error.contains("key slot 9"), "{error}");
        assert_eq!(store.items.lock().unwrap().len(), 1);
    }

    #[test]
    fn an_item_of_another_type_is_an_error_not_a_value() {
        let store = Arc::new(TestItems::default());
        store
            .put(0, b"a", &postcard::to_stdvec("k").unwrap(), 0, &[0xff; 12])
            .unwrap();
        let mut views = maps(&store, None);
        assert_eq!(views.view(0, 0).get("k"), None);
        let error = views.finish(0).unwrap_err().to_string();
        assert!(error.contains("does not read as `i64`"), "{error}");
        assert_eq!(views.view(0, 0).iter().count(), 0);
        assert!(views.finish(0).is_err(), "iterating fails the same way");
    }
}
