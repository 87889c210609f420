//! The items of list and map views in the disk store (`layout.rs` spells their keys): what a
//! stored view reads and writes one item at a time.

use std::sync::Mutex;

use datafusion::common::DataFusionError;
use udf_core::Error;
use udf_core::ptf::{ItemStore, StoredItem};

use super::layout::{StoreKey, split_stamp, stamped};
use super::store::ProcessorStore;

pub struct ViewItems {
    store: ProcessorStore,
    /// A key and a value under construction, reused (calls of one processor come one at a
    /// time, so the lock is never contended).
    buffers: Mutex<(StoreKey, Vec<u8>)>,
}

impl ViewItems {
    pub fn new(store: ProcessorStore) -> Self {
        ViewItems {
            store,
            buffers: Mutex::default(),
        }
    }

    fn buffers(&self) -> std::sync::MutexGuard<'_, (StoreKey, Vec<u8>)> {
        self.buffers.lock().unwrap_or_else(|p| p.into_inner())
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
        let mut buffers = self.buffers();
        let Some(value) = self
            .store
            .get(buffers.0.item(entry, key, item))
            .map_err(failed)?
        else {
            return Ok(None);
        };
        let (written, payload) = split_stamp(&value).ok_or_else(cut_short)?;
        out.clear();
        out.extend_from_slice(payload);
        Ok(Some(written))
    }

    fn put(
        &self,
        entry: u16,
        key: &[u8],
        item: &[u8],
        written: i64,
        value: &[u8],
    ) -> Result<(), Error> {
        let mut buffers = self.buffers();
        let (store_key, stamped_value) = &mut *buffers;
        stamped(written, value, stamped_value);
        self.store
            .insert(store_key.item(entry, key, item), stamped_value)
            .map_err(failed)
    }

    fn delete(&self, entry: u16, key: &[u8], item: &[u8]) -> Result<(), Error> {
        let mut buffers = self.buffers();
        self.store
            .remove(buffers.0.item(entry, key, item))
            .map_err(failed)
    }

    fn scan<'a>(
        &'a self,
        entry: u16,
        key: &[u8],
    ) -> Box<dyn Iterator<Item = Result<StoredItem, Error>> + 'a> {
        let prefix = StoreKey::default().items(entry, key).to_vec();
        let start = prefix.len();
        Box::new(self.store.scan(&prefix).map(move |found| {
            let (store_key, value) = found.map_err(failed)?;
            let (written, payload) = split_stamp(&value).ok_or_else(cut_short)?;
            Ok(StoredItem {
                item: store_key[start..].to_vec(),
                written,
                value: payload.to_vec(),
            })
        }))
    }

    fn last(&self, entry: u16, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let mut buffers = self.buffers();
        let prefix = buffers.0.items(entry, key);
        let start = prefix.len();
        Ok(self
            .store
            .last_key(prefix)
            .map_err(failed)?
            .map(|store_key| store_key[start..].to_vec()))
    }
}
