//! Keys found through a hash map, in Arrow's row format.

use std::hash::Hash;

use datafusion::common::HashMap;

use super::Allocator;

/// Keys to slots, and back (to free a slot and to name a slot's key).
pub struct HashedSlots<K> {
    slots: HashMap<K, u32>,
    keys: Vec<Option<K>>,
}

impl<K: Hash + Eq + Clone> HashedSlots<K> {
    pub fn new() -> Self {
        HashedSlots {
            slots: HashMap::default(),
            keys: Vec::new(),
        }
    }

    /// The slot of `key`, assigning one to a key not seen before.
    #[inline]
    pub fn slot<Q>(&mut self, key: &Q, owned: impl FnOnce() -> K, slots: &mut Allocator) -> u32
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        match self.slots.get(key) {
            Some(&slot) => slot,
            None => self.assign(owned(), slots),
        }
    }

    /// A slot for a key seen for the first time (kept out of the lookup loops).
    #[cold]
    #[inline(never)]
    fn assign(&mut self, key: K, slots: &mut Allocator) -> u32 {
        let slot = slots.take();
        self.insert(key, slot);
        slot
    }

    /// Records that `key` has `slot`.
    pub fn insert(&mut self, key: K, slot: u32) {
        let index = slot as usize;
        if self.keys.len() <= index {
            self.keys.resize(index + 1, None);
        }
        self.keys[index] = Some(key.clone());
        self.slots.insert(key, slot);
    }

    pub fn find<Q>(&self, key: &Q) -> Option<u32>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slots.get(key).copied()
    }

    /// The key in `slot`, if the slot is this map's.
    pub fn key(&self, slot: u32) -> Option<&K> {
        self.keys.get(slot as usize).and_then(Option::as_ref)
    }

    /// Forgets the key in `slot`; whether the slot was this map's.
    pub fn release(&mut self, slot: u32) -> bool {
        match self.keys.get_mut(slot as usize).and_then(Option::take) {
            Some(key) => {
                self.slots.remove(&key);
                true
            }
            None => false,
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }
}
