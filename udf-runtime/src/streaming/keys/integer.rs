//! Slots of one integer key column. Small non-negative keys — ids, codes, `id % n` — are
//! looked up in a plain vector indexed by the key, which costs one load instead of a hash
//! and a probe; other keys go to a hash map. The vector grows only while it stays within a
//! few words per key in use, so sparse keys cannot make it large.

use super::Allocator;
use super::int_map::IntMap;

/// No slot (in the dense vector).
const NONE: u32 = u32::MAX;
/// The dense vector never grows beyond this many keys (64 MiB).
const DENSE_LIMIT: usize = 1 << 24;
/// The dense vector may always cover this many keys.
const DENSE_FLOOR: usize = 1024;
/// Otherwise it covers at most this many keys per key in use: 64 bytes a key, about what a
/// hash map's buckets take for it at their usual load.
const DENSE_PER_KEY: usize = 16;

pub struct IntegerSlots {
    /// The slot of key `k` at index `k`, for keys `0..dense.len()`; every such key is here,
    /// none in `hashed`.
    dense: Vec<u32>,
    /// The slots of the other keys.
    hashed: IntMap,
    /// The key of each slot in use (`Some(None)`: NULL).
    keys: Vec<Option<Option<i64>>>,
    /// Slots in use.
    len: usize,
    /// NULL's slot.
    null: Option<u32>,
}

impl IntegerSlots {
    pub fn new() -> Self {
        IntegerSlots {
            dense: Vec::new(),
            hashed: IntMap::default(),
            keys: Vec::new(),
            len: 0,
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
        } else if let Some(slot) = self.hashed.get(key) {
            return slot;
        }
        self.assign(key, slots)
    }

    pub fn null_slot(&mut self, slots: &mut Allocator) -> u32 {
        match self.null {
            Some(slot) => slot,
            None => {
                let slot = self.record(None, slots);
                self.null = Some(slot);
                slot
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn assign(&mut self, key: i64, slots: &mut Allocator) -> u32 {
        if key >= 0 && (key as usize) >= self.dense.len() {
            self.grow_to_cover(key as usize);
        }
        let slot = self.record(Some(key), slots);
        match self.dense.get_mut(key as u64 as usize) {
            Some(place) => *place = slot,
            None => self.hashed.insert(key, slot),
        }
        slot
    }

    /// A slot for `key`, noted as its.
    fn record(&mut self, key: Option<i64>, slots: &mut Allocator) -> u32 {
        let slot = slots.take();
        let index = slot as usize;
        if self.keys.len() <= index {
            self.keys.resize(index + 1, None);
        }
        self.keys[index] = Some(key);
        self.len += 1;
        slot
    }

    /// Grows the dense vector to cover `key` if that keeps it within its bounds (at least
    /// doubling it, so growing costs a constant a key), moving the hashed keys it then
    /// covers into it.
    fn grow_to_cover(&mut self, key: usize) {
        let bound = DENSE_LIMIT.min(DENSE_FLOOR.max(DENSE_PER_KEY * (self.len + 1)));
        if key >= bound {
            return;
        }
        let len = (key + 1).max(self.dense.len() * 2).min(bound);
        self.dense.resize(len, NONE);
        let dense = &mut self.dense;
        self.hashed
            .retain(|key, slot| match dense.get_mut(key as u64 as usize) {
                Some(place) => {
                    *place = slot;
                    false
                }
                None => true,
            });
    }

    /// The slot of `key` if it has one (`None` is NULL).
    pub fn find(&self, key: Option<i64>) -> Option<u32> {
        let Some(key) = key else {
            return self.null;
        };
        match self.dense.get(key as u64 as usize) {
            Some(&NONE) => None,
            Some(&slot) => Some(slot),
            None => self.hashed.get(key),
        }
    }

    /// The key in `slot` (`Some(None)` for NULL), if the slot is in use.
    pub fn key(&self, slot: u32) -> Option<Option<i64>> {
        self.keys.get(slot as usize).copied().flatten()
    }

    /// Forgets the key in `slot`; whether the slot was in use.
    pub fn release(&mut self, slot: u32) -> bool {
        let Some(key) = self.keys.get_mut(slot as usize).and_then(Option::take) else {
            return false;
        };
        self.len -= 1;
        match key {
            None => self.null = None,
            Some(key) => match self.dense.get_mut(key as u64 as usize) {
                Some(place) => *place = NONE,
                None => {
                    self.hashed.remove(key);
                }
            },
        }
        true
    }

    /// Keys holding a slot.
    pub fn len(&self) -> usize {
        self.len
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
        // Enough keys in use for the vector to cover 0..=4000: 3000 is hashed first, then
        // moved into the vector by a later growth, keeping its slot.
        let late = table.slot(3000, &mut slots);
        assert!(table.hashed.get(3000).is_some());
        for key in 2..600 {
            table.slot(key, &mut slots);
        }
        table.slot(4000, &mut slots);
        assert!(table.dense.len() > 4000, "{}", table.dense.len());
        assert!(table.hashed.get(3000).is_none());
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
