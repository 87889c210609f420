//! Entries that nothing reads again, dropped by compactions instead of removed one by one: a
//! keyspace of groups (`DiskStore::groups`) may be given a mark, and every entry under a key
//! that sorts before it is dead. A window aggregate's keys begin with the window's end, so
//! once windows fired the mark is the end after the last of them: removing the groups of a
//! window with a tombstone each wrote as much as moving them out had, and the tombstones
//! were compacted in turn — half of the run's time with a million groups a window.
//!
//! Every version of such a key is dead (a key of a fired window is never written again), so
//! the filter destroys entries without leaving tombstones.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use lsm_tree::compaction::filter::{CompactionFilter, Context, Factory, ItemAccessor, Verdict};

/// One keyspace's mark: entries under keys before it are dead. Empty: none is.
#[derive(Debug, Default)]
pub struct DeadBelow {
    mark: Mutex<Vec<u8>>,
}

impl DeadBelow {
    /// Entries under keys before `mark` are dead from now on (a mark never moves back).
    pub fn raise(&self, mark: &[u8]) {
        let mut current = self.mark.lock().unwrap_or_else(|p| p.into_inner());
        if mark > current.as_slice() {
            *current = mark.to_vec();
        }
    }

    fn current(&self) -> Vec<u8> {
        self.mark.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The marks of a store's keyspaces of groups, by keyspace name: made by whichever asks
/// first, the keyspace's compactions or its processor.
#[derive(Debug, Default, Clone)]
pub struct DeadMarks {
    marks: Arc<Mutex<HashMap<String, Arc<DeadBelow>>>>,
}

impl DeadMarks {
    pub fn of(&self, keyspace: &str) -> Arc<DeadBelow> {
        let mut marks = self.marks.lock().unwrap_or_else(|p| p.into_inner());
        marks.entry(keyspace.to_owned()).or_default().clone()
    }
}

/// The compaction filter factory of one keyspace's mark.
pub struct DeadBelowFilters(pub Arc<DeadBelow>);

impl Factory for DeadBelowFilters {
    fn name(&self) -> &str {
        "udf-dead-below"
    }

    fn make_filter(&self, _ctx: &Context) -> Box<dyn CompactionFilter> {
        Box::new(DeadBelowFilter {
            mark: self.0.current(),
        })
    }
}

/// One compaction's filter: judges by the mark when the compaction started.
struct DeadBelowFilter {
    mark: Vec<u8>,
}

impl CompactionFilter for DeadBelowFilter {
    fn filter_item(&mut self, item: ItemAccessor<'_>, _ctx: &Context) -> lsm_tree::Result<Verdict> {
        Ok(if item.key().as_ref() < self.mark.as_slice() {
            Verdict::Destroy
        } else {
            Verdict::Keep
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::streaming::state::disk::store::test_store;

    fn keys(store: &crate::streaming::state::disk::store::ProcessorStore) -> Vec<Vec<u8>> {
        store
            .scan(&[])
            .map(|entry| entry.map(|(key, _)| key.to_vec()))
            .collect::<datafusion::common::Result<_>>()
            .unwrap()
    }

    #[test]
    fn compactions_drop_the_entries_below_the_mark_and_keep_the_rest() {
        let run = test_store("dead-below", Vec::new());
        let groups = run.groups(0).unwrap();
        for key in [&b"a1"[..], b"a2", b"b1", b"c1"] {
            groups.insert(key, b"v").unwrap();
        }
        groups.dead_below(b"b").unwrap();
        // A lower mark later does not bring entries back.
        groups.dead_below(b"a").unwrap();
        assert_eq!(
            keys(&groups).len(),
            4,
            "dead entries stay until a compaction"
        );
        groups.compact_now().unwrap();
        assert_eq!(keys(&groups), [b"b1".to_vec(), b"c1".to_vec()]);
    }

    #[test]
    fn only_a_keyspace_of_groups_has_a_mark() {
        let run = test_store("dead-below-values", Vec::new());
        let error = run.processor(0).unwrap().dead_below(b"b").unwrap_err();
        assert!(error.to_string().contains("keyspace of groups"), "{error}");
    }
}
