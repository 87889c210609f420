//! The writes of one move out — every entry and timer of the keys leaving memory — gathered
//! and written together. Sorted, thousands of them go to the store as a run of new tables
//! (`ProcessorStore::ingest`): no memtable, no journal, no flush behind it, and keys that
//! left together lie together on disk. A few go through the memtable, where a run's fixed
//! cost (files written and registered, about 2.5 ms) would outweigh them.

use std::ops::Range;

use datafusion::common::Result;

use super::layout::leading;
use super::store::ProcessorStore;

/// From this many writes on, a move out is written as a run of tables. One write through the
/// memtable costs about 1 µs, a run about 2.5 ms plus 0.25 µs a write (measured on fjall 3.1).
const RUN_AT_LEAST: usize = 4_096;

/// Writes waiting: keys and values back to back in one buffer, so gathering them allocates
/// nothing once the buffer has grown.
#[derive(Default)]
pub struct WriteSet {
    bytes: Vec<u8>,
    writes: Vec<Write>,
}

struct Write {
    /// The key's first bytes, for sorting (`layout::leading`).
    leading: u128,
    key: Range<usize>,
    /// `None` removes the key.
    value: Option<Range<usize>>,
}

impl WriteSet {
    /// Writes `key` with the value `value` appends to the buffer it is given, if it returns
    /// `true`; nothing if `false`.
    pub fn put_with<E>(
        &mut self,
        key: &[u8],
        value: impl FnOnce(&mut Vec<u8>) -> Result<bool, E>,
    ) -> Result<bool, E> {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        match value(&mut self.bytes) {
            Ok(true) => {
                self.writes.push(Write {
                    leading: leading(key),
                    key: start..key_end,
                    value: Some(key_end..self.bytes.len()),
                });
                Ok(true)
            }
            outcome => {
                self.bytes.truncate(start);
                outcome
            }
        }
    }

    /// Writes `key` with `value`.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        let written = self.put_with(key, |out| {
            out.extend_from_slice(value);
            Ok::<_, std::convert::Infallible>(true)
        });
        debug_assert!(matches!(written, Ok(true)));
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.writes.push(Write {
            leading: leading(key),
            key: start..self.bytes.len(),
            value: None,
        });
    }

    /// Writes gathered so far.
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Writes everything gathered to `store` and starts empty. Of writes to one key, the
    /// last counts.
    pub fn commit(&mut self, store: &ProcessorStore) -> Result<()> {
        let WriteSet { bytes, writes } = self;
        let run = writes.len() >= RUN_AT_LEAST;
        if run {
            // Stable: writes to one key stay in the order they were made.
            writes.sort_by(|a, b| {
                (a.leading.cmp(&b.leading))
                    .then_with(|| bytes[a.key.clone()].cmp(&bytes[b.key.clone()]))
            });
        }
        let key = |write: &Write| &bytes[write.key.clone()];
        let entries = writes
            .iter()
            .enumerate()
            .filter(|&(at, write)| {
                !run || writes
                    .get(at + 1)
                    .is_none_or(|next| key(next) != key(write))
            })
            .map(|(_, write)| (key(write), write.value.clone().map(|value| &bytes[value])));
        let written = if run {
            store.ingest(entries)
        } else {
            entries
                .into_iter()
                .try_for_each(|(key, value)| match value {
                    Some(value) => store.insert(key, value),
                    None => store.remove(key),
                })
        };
        bytes.clear();
        writes.clear();
        written
    }
}

#[cfg(test)]
mod tests {
    use super::super::store::test_store;
    use super::*;

    fn key(i: u32) -> [u8; 5] {
        let mut key = [7; 5];
        key[1..].copy_from_slice(&i.to_be_bytes());
        key
    }

    fn read(store: &ProcessorStore, i: u32) -> Option<Vec<u8>> {
        store.get(&key(i)).unwrap().map(|value| value.to_vec())
    }

    #[test]
    fn a_few_writes_and_a_run_of_them_land_alike_and_the_last_write_to_a_key_counts() {
        let run = test_store("write-set", vec![None]);
        let store = run.processor(0).unwrap();
        let mut writes = WriteSet::default();
        // A few: through the memtable.
        for i in 0..10 {
            writes.put(&key(i), &i.to_le_bytes());
        }
        writes.commit(&store).unwrap();
        assert_eq!(read(&store, 3), Some(3u32.to_le_bytes().to_vec()));
        // A run (in no order, with one key written twice and one removed): new tables.
        let tables = store.disk_bytes();
        for i in (0..RUN_AT_LEAST as u32 + 10).rev() {
            writes.put(&key(i), &(i + 1).to_le_bytes());
        }
        writes.put(&key(5), b"again");
        writes.remove(&key(6));
        let skipped = writes.put_with(&key(9), |_| Ok::<_, ()>(false));
        assert_eq!(skipped, Ok(false), "nothing to write");
        let failed = writes.put_with(&key(1), |out| {
            out.extend_from_slice(b"half");
            Err("cannot save")
        });
        assert_eq!(failed, Err("cannot save"));
        writes.commit(&store).unwrap();
        assert!(store.disk_bytes() > tables, "written as tables");
        assert_eq!(read(&store, 5), Some(b"again".to_vec()));
        assert_eq!(read(&store, 6), None);
        assert_eq!(read(&store, 9), Some(10u32.to_le_bytes().to_vec()));
        assert_eq!(read(&store, 1), Some(2u32.to_le_bytes().to_vec()));
        let count = store.scan(&[7]).count();
        assert_eq!(count, RUN_AT_LEAST + 10 - 1);
    }
}
