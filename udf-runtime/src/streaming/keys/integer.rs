//! Slots of one integer key column. Small non-negative keys — ids, codes, `id % n` — are
//! looked up in a plain vector indexed by the key, which costs one load instead of a hash
//! and a probe; other keys go to a hash map. The vector grows only while it stays within a
//! few words per key in use, so sparse keys cannot make it large.

use super::Allocator;
use super::hashed::HashedSlots;

/// No slot (in the dense vector).
const NONE: u32 = u32::MAX;
/// The dense vector never grows beyond this many keys (4 MiB).
const DENSE_LIMIT: usize = 1 << 20;
/// The dense vector may always cover this many keys.
const DENSE_FLOOR: usize = 1024;
/// Otherwise it covers at most this many keys per key in use.
const DENSE_PER_KEY: usize = 8;

pub struct IntegerSlots {
    /// The slot of key `k` at index `k`, for keys `0..dense.len()`; every such key is here,
    /// none in `hashed`.
    dense: Vec<u32>,
    hashed: HashedSlots<i64>,
    /// The key of each slot held by a dense key.
    dense_keys: Vec<Option<i64>>,
    in_dense: usize,
    /// NULL's slot.
    null: Option<u32>,
}

impl IntegerSlots {
    pub fn new() -> Self {
        IntegerSlots {
            dense: Vec::new(),
            hashed: HashedSlots::new(),
            dense_keys: Vec::new(),
            in_dense: 0,
            null: None,
        }
    }

    /// The slot of `key`, assigning one to a key not seen before.
    #[inline]
    pub fn slot(&mut self, key: i64, slots: &mut Allocator) -> u32 {
        // A negative key converts to an index past any vector.
        if let Some(&slot) = self.dense.get(key as u64 as usize) {
            if slot != NONE {
                return slot;
            }
        } else if let Some(slot) = self.hashed.find(&key) {
            return slot;
        }
        self.assign(key, slots)
    }

    pub fn null_slot(&mut self, slots: &mut Allocator) -> u32 {
        *self.null.get_or_insert_with(|| slots.take())
    }

    #[cold]
    #[inline(never)]
    fn assign(&mut self, key: i64, slots: &mut Allocator) -> u32 {
        let slot = slots.take();
        if key >= 0 && (key as usize) >= self.dense.len() {
            self.grow_to_cover(key as usize);
        }
        if key >= 0 && (key as usize) < self.dense.len() {
            self.dense[key as usize] = slot;
            self.note_dense(key, slot);
        } else {
            self.hashed.insert(key, slot);
        }
        slot
    }

    /// Grows the dense vector to cover `key` if that keeps it within its bounds, moving the
    /// hashed keys it then covers into it.
    fn grow_to_cover(&mut self, key: usize) {
        let Some(len) = key.checked_add(1).map(usize::next_power_of_two) else {
            return;
        };
        let in_use = self.in_dense + self.hashed.len() + 1;
        if len > DENSE_LIMIT || len > DENSE_FLOOR.max(DENSE_PER_KEY * in_use) {
            return;
        }
        self.dense.resize(len, NONE);
        for (moved, slot) in self.hashed.drain_where(|k| *k >= 0 && (*k as usize) < len) {
            self.dense[moved as usize] = slot;
            self.note_dense(moved, slot);
        }
    }

    fn note_dense(&mut self, key: i64, slot: u32) {
        let index = slot as usize;
        if self.dense_keys.len() <= index {
            self.dense_keys.resize(index + 1, None);
        }
        self.dense_keys[index] = Some(key);
        self.in_dense += 1;
    }

    /// The slot of `key` if it has one (`None` is NULL).
    pub fn find(&self, key: Option<i64>) -> Option<u32> {
        let Some(key) = key else {
            return self.null;
        };
        match self.dense.get(key as u64 as usize) {
            Some(&NONE) => None,
            Some(&slot) => Some(slot),
            None => self.hashed.find(&key),
        }
    }

    /// The key in `slot` (`Some(None)` for NULL), if the slot is in use.
    pub fn key(&self, slot: u32) -> Option<Option<i64>> {
        if self.null == Some(slot) {
            return Some(None);
        }
        if let Some(&Some(key)) = self.dense_keys.get(slot as usize) {
            return Some(Some(key));
        }
        self.hashed.key(slot).map(|key| Some(*key))
    }

    /// Forgets the key in `slot`; whether the slot was in use.
    pub fn release(&mut self, slot: u32) -> bool {
        if self.null == Some(slot) {
            self.null = None;
            return true;
        }
        if let Some(key) = self
            .dense_keys
            .get_mut(slot as usize)
            .and_then(Option::take)
        {
            self.dense[key as usize] = NONE;
            self.in_dense -= 1;
            return true;
        }
        self.hashed.release(slot)
    }

    /// Keys holding a slot.
    pub fn len(&self) -> usize {
        self.in_dense + self.hashed.len() + usize::from(self.null.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_hashed_keys_keep_their_slots_while_the_vector_grows() {
        let mut slots = Allocator::default();
        let mut table = IntegerSlots::new();
        // Far, negative and huge keys are hashed; small ones dense.
        let keys = [5_000_000, -3, i64::MAX, i64::MIN, 0, 1, 1023];
        let first: Vec<u32> = keys.iter().map(|k| table.slot(*k, &mut slots)).collect();
        assert_eq!(first, [0, 1, 2, 3, 4, 5, 6]);
        assert!(table.dense.len() <= DENSE_FLOOR);
        // Enough keys in use for the vector to cover 0..4096: 3000 is hashed first, then
        // moved into the vector by a later growth, keeping its slot.
        let late = table.slot(3000, &mut slots);
        assert!(table.hashed.find(&3000).is_some());
        for key in 2..600 {
            table.slot(key, &mut slots);
        }
        table.slot(4000, &mut slots);
        assert!(table.dense.len() >= 4096, "{}", table.dense.len());
        assert_eq!(table.hashed.find(&3000), None);
        assert_eq!(table.slot(3000, &mut slots), late);
        assert_eq!(table.find(Some(3000)), Some(late));
        let again: Vec<u32> = keys.iter().map(|k| table.slot(*k, &mut slots)).collect();
        assert_eq!(again, first);
        for (key, slot) in keys.iter().zip(&first) {
            assert_eq!(table.key(*slot), Some(Some(*key)));
        }
        assert_eq!(table.len(), keys.len() + 1 + 598 + 1);
    }

    #[test]
    fn released_keys_are_forgotten_in_either_place() {
        let mut slots = Allocator::default();
        let mut table = IntegerSlots::new();
        let dense = table.slot(7, &mut slots);
        let hashed = table.slot(-7, &mut slots);
        let null = table.null_slot(&mut slots);
        assert!(table.release(dense));
        assert!(!table.release(dense));
        assert!(table.release(hashed));
        assert!(table.release(null));
        assert_eq!(table.len(), 0);
        assert_eq!(table.find(Some(7)), None);
        assert_eq!(table.find(Some(-7)), None);
        assert_eq!(table.find(None), None);
        assert_eq!(table.key(dense), None);
    }

    #[test]
    fn sparse_keys_do_not_grow_the_vector() {
        let mut slots = Allocator::default();
        let mut table = IntegerSlots::new();
        for i in 0..100 {
            table.slot(i * 100_000, &mut slots);
        }
        assert!(table.dense.len() <= DENSE_FLOOR);
        assert_eq!(table.len(), 100);
    }
}
