//! The view items in use, kept in memory in front of the store and written back when they
//! leave: a bounded cache of items (their encodings, which decode in nanoseconds, where the
//! store's point read takes microseconds).
//!
//! Items are grouped by their key's prefix (`2 · entry · len · key`), each group in item
//! order, so iterating a view and finding a list's last position need no sort. A group knows
//! whether the store may hold items of its key: while it does not (a key whose items never
//! left memory), an item missing here is missing everywhere, and a view whose working set
//! fits the cache never touches the store. Items leave the cache about least recently used
//! first; those changed since they were read are written back as they go.
//!
//! Two filters (`moved_out.rs`) remember what was written: the prefixes, so a group made
//! later knows whether its key is in the store, and the items themselves, so an item never
//! written is known missing without a read even when others of its key were (a map growing
//! by new entries, the common case). The items' filter takes about 1.5 bytes an item; once
//! it would take more than half the budget it gives up, and reads of keys with items on disk
//! go to the store again.

use std::collections::BTreeMap;

use datafusion::common::HashMap;

use super::layout::push_stamped;
use super::moved_out::{MovedOut, key_hash};
use super::write_set::WriteSet;

/// What a cached item takes beyond its item's and value's bytes: its place in its group's
/// tree, its two allocations and its bookkeeping.
const ITEM_OVERHEAD: usize = 112;
/// What a group takes beyond its prefix's bytes: its place in the table and its tree.
const GROUP_OVERHEAD: usize = 128;
/// Uses sampled to pick which items leave.
const SAMPLE: usize = 4096;
/// The share of the budget the items' filter may take (then it gives up): a filter entry
/// takes 1.5 bytes, a cached item a hundred and more, and only the filter knows that an item
/// never written is missing.
const ITEM_FILTER_SHARE: u64 = 2;
/// The share the prefixes' filter may take.
const PREFIX_FILTER_SHARE: u64 = 8;

/// What the cache answered (EXPLAIN ANALYZE shows it).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ItemCounts {
    /// Reads answered from memory: the item was cached, or its key has nothing on disk.
    pub hits: usize,
    /// Reads that went to the store.
    pub misses: usize,
    /// Items written back to the store as they left the cache.
    pub written_back: usize,
}

/// One item as the cache holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cached {
    /// When it was written, and its value's encoding; `None` for an item that is not there
    /// (removed, or found missing in the store).
    pub value: Option<(i64, Box<[u8]>)>,
    /// Whether the store's copy differs (it is written back when the item leaves).
    dirty: bool,
    /// The cache's use count when it was last used.
    used: u64,
}

impl Cached {
    fn bytes(&self, item: &[u8]) -> usize {
        ITEM_OVERHEAD + item.len() + self.value.as_ref().map_or(0, |(_, v)| v.len())
    }
}

/// The cached items of one key's entry.
#[derive(Default)]
struct Group {
    items: BTreeMap<Box<[u8]>, Cached>,
    /// Whether the store may hold items of this key.
    on_disk: bool,
}

/// A copy of a cached item: its bytes, and when it was written and its value (`None` if it
/// is not there).
pub type CopiedItem = (Vec<u8>, Option<(i64, Vec<u8>)>);

/// What the cache knows of an item.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// It is cached: its stamp and value, or `None` if it is not there.
    Cached(Option<(i64, &'a [u8])>),
    /// Its key has no items on disk and this one is not cached: it is not there.
    Missing,
    /// Only the store knows.
    Unknown,
}

pub struct ItemCache {
    groups: HashMap<Box<[u8]>, Group>,
    /// Prefixes whose items may be in the store.
    written: MovedOut,
    /// Store keys of the items that may be in the store.
    written_items: MovedOut,
    bytes: usize,
    budget: usize,
    uses: u64,
    counts: ItemCounts,
}

impl ItemCache {
    /// A cache of at most about `budget` bytes.
    pub fn new(budget: u64) -> Self {
        ItemCache {
            groups: HashMap::default(),
            written: MovedOut::with_limit(budget / PREFIX_FILTER_SHARE),
            written_items: MovedOut::with_limit(budget / ITEM_FILTER_SHARE),
            bytes: 0,
            budget: usize::try_from(budget).unwrap_or(usize::MAX),
            uses: 0,
            counts: ItemCounts::default(),
        }
    }

    pub fn counts(&self) -> ItemCounts {
        self.counts
    }

    /// Memory the cache takes, as it counts it.
    pub fn bytes(&self) -> usize {
        self.bytes + (self.written.bytes() + self.written_items.bytes()) as usize
    }

    /// What the cache knows of the item whose store key is `store_key`: its key's prefix
    /// (`prefix_len` bytes long) and the item's own bytes.
    pub fn lookup(&mut self, store_key: &[u8], prefix_len: usize) -> Lookup<'_> {
        let (prefix, item) = store_key.split_at(prefix_len);
        self.uses += 1;
        let uses = self.uses;
        let on_disk = match self.groups.get_mut(prefix) {
            Some(group) => {
                if let Some(cached) = group.items.get_mut(item) {
                    cached.used = uses;
                    self.counts.hits += 1;
                    return Lookup::Cached(cached.value.as_ref().map(|(w, v)| (*w, &v[..])));
                }
                group.on_disk
            }
            None => self.written.may_contain(prefix),
        };
        let on_disk = on_disk && self.written_items.may_contain(store_key);
        if on_disk {
            self.counts.misses += 1;
            Lookup::Unknown
        } else {
            self.counts.hits += 1;
            Lookup::Missing
        }
    }

    /// Keeps what the store holds for `item` (read after [`Lookup::Unknown`]).
    pub fn remember(&mut self, prefix: &[u8], item: &[u8], value: Option<(i64, &[u8])>) {
        self.keep(prefix, item, value, false);
    }

    /// Sets `item` to `value` (`None` removes it); the store gets it when it leaves.
    pub fn write(&mut self, prefix: &[u8], item: &[u8], value: Option<(i64, &[u8])>) {
        self.keep(prefix, item, value, true);
    }

    fn keep(&mut self, prefix: &[u8], item: &[u8], value: Option<(i64, &[u8])>, dirty: bool) {
        self.uses += 1;
        let uses = self.uses;
        let on_disk = match self.groups.get(prefix) {
            Some(group) => group.on_disk,
            None => self.written.may_contain(prefix),
        };
        // Removing an item the store cannot hold leaves nothing to remember.
        if value.is_none() && dirty && !on_disk {
            if let Some(group) = self.groups.get_mut(prefix)
                && let Some(gone) = group.items.remove(item)
            {
                self.bytes -= gone.bytes(item);
            }
            return;
        }
        let group = match self.groups.get_mut(prefix) {
            Some(group) => group,
            None => {
                self.bytes += GROUP_OVERHEAD + prefix.len();
                self.groups.entry(prefix.into()).or_insert(Group {
                    items: BTreeMap::new(),
                    on_disk,
                })
            }
        };
        let cached = Cached {
            value: value.map(|(written, v)| (written, v.into())),
            dirty,
            used: uses,
        };
        self.bytes += cached.bytes(item);
        match group.items.get_mut(item) {
            Some(old) => {
                self.bytes -= old.bytes(item);
                // Still dirty if an earlier change was not written back.
                let dirty = cached.dirty || old.dirty;
                *old = Cached { dirty, ..cached };
            }
            None => {
                group.items.insert(item.into(), cached);
            }
        }
    }

    /// Whether the cache holds more than its budget (then [`ItemCache::evict`]).
    pub fn over_budget(&self) -> bool {
        self.bytes() > self.budget
    }

    /// Lets about the least recently used items go until the cache holds three quarters of
    /// its budget; those changed go into `writes` (the caller writes them to the store).
    pub fn evict(&mut self, writes: &mut WriteSet) {
        let target = self.budget / 4 * 3;
        let excess = self.bytes().saturating_sub(target);
        if excess == 0 {
            return;
        }
        let share = excess as f64 / self.bytes.max(1) as f64;
        let cut = self.cut(share);
        let (mut freed, before) = (0, writes.len());
        let (mut written, mut items_written, mut key) = (Vec::new(), Vec::new(), Vec::new());
        self.groups.retain(|prefix, group| {
            let mut wrote = false;
            group.items.retain(|item, cached| {
                if cached.used > cut {
                    return true;
                }
                if cached.dirty {
                    write_back(writes, &mut key, prefix, item, cached);
                    items_written.push(key_hash(&key));
                    wrote = true;
                }
                freed += cached.bytes(item);
                false
            });
            if wrote && !group.on_disk {
                group.on_disk = true;
                written.push(key_hash(prefix));
            }
            if group.items.is_empty() {
                freed += GROUP_OVERHEAD + prefix.len();
                return false;
            }
            true
        });
        self.counts.written_back += writes.len() - before;
        self.bytes -= freed;
        self.note_written(&written, &items_written);
    }

    /// Notes prefixes and items written to the store.
    fn note_written(&mut self, prefixes: &[u64], items: &[u64]) {
        self.written.insert_all(prefixes);
        self.written_items.insert_all(items);
    }

    /// The use at or below which about `share` of the items lie, from a sample.
    fn cut(&self, share: f64) -> u64 {
        let items: usize = self.groups.values().map(|g| g.items.len()).sum();
        let step = (items / SAMPLE).max(1);
        let mut sample: Vec<u64> = self
            .groups
            .values()
            .flat_map(|g| g.items.values())
            .step_by(step)
            .map(|cached| cached.used)
            .collect();
        if sample.is_empty() {
            return u64::MAX;
        }
        sample.sort_unstable();
        let at = ((sample.len() as f64 * share.min(1.0)) as usize).min(sample.len() - 1);
        sample[at]
    }

    /// Puts every changed item into `writes` and keeps it, now the same as the store's.
    pub fn write_back_all(&mut self, writes: &mut WriteSet) {
        let before = writes.len();
        let (mut written, mut items_written, mut key) = (Vec::new(), Vec::new(), Vec::new());
        for (prefix, group) in &mut self.groups {
            let mut wrote = false;
            for (item, cached) in group.items.iter_mut().filter(|(_, c)| c.dirty) {
                write_back(writes, &mut key, prefix, item, cached);
                items_written.push(key_hash(&key));
                cached.dirty = false;
                wrote = true;
            }
            if wrote && !group.on_disk {
                group.on_disk = true;
                written.push(key_hash(prefix));
            }
        }
        self.counts.written_back += writes.len() - before;
        self.note_written(&written, &items_written);
    }

    /// Drops the key's items (after [`ItemCache::write_back_all`], when the store's are
    /// about to change under it).
    pub fn forget(&mut self, prefix: &[u8]) {
        if let Some(group) = self.groups.remove(prefix) {
            let items: usize = group.items.iter().map(|(i, c)| c.bytes(i)).sum();
            self.bytes -= items + GROUP_OVERHEAD + prefix.len();
            if group.on_disk {
                self.written.insert_all(&[key_hash(prefix)]);
            }
        }
    }

    /// The key's cached items in item order (those not there too, as `None`), and whether
    /// the store may hold others.
    pub fn items(&self, prefix: &[u8]) -> (Vec<CopiedItem>, bool) {
        match self.groups.get(prefix) {
            Some(group) => (
                group
                    .items
                    .iter()
                    .map(|(item, cached)| {
                        let value = cached.value.as_ref().map(|(w, v)| (*w, v.to_vec()));
                        (item.to_vec(), value)
                    })
                    .collect(),
                group.on_disk,
            ),
            None => (Vec::new(), self.written.may_contain(prefix)),
        }
    }

    /// The key's greatest cached item that is there, and whether the store may hold items.
    pub fn last(&self, prefix: &[u8]) -> (Option<Box<[u8]>>, bool) {
        match self.groups.get(prefix) {
            Some(group) => (
                group
                    .items
                    .iter()
                    .rev()
                    .find(|(_, cached)| cached.value.is_some())
                    .map(|(item, _)| item.clone()),
                group.on_disk,
            ),
            None => (None, self.written.may_contain(prefix)),
        }
    }

    /// Whether `item` is cached as not there (removed since the store got it).
    pub fn is_removed(&self, prefix: &[u8], item: &[u8]) -> bool {
        self.groups
            .get(prefix)
            .and_then(|group| group.items.get(item))
            .is_some_and(|cached| cached.value.is_none())
    }
}

/// The store's write for a changed item: its value stamped, or its removal (`key` is
/// scratch).
fn write_back(
    writes: &mut WriteSet,
    key: &mut Vec<u8>,
    prefix: &[u8],
    item: &[u8],
    cached: &Cached,
) {
    key.clear();
    key.extend_from_slice(prefix);
    key.extend_from_slice(item);
    match &cached.value {
        Some((written, value)) => {
            let put = writes.put_with(key, |out| {
                push_stamped(*written, value, out);
                Ok::<_, std::convert::Infallible>(true)
            });
            debug_assert!(matches!(put, Ok(true)));
        }
        None => writes.remove(key),
    }
}
