//! Integer keys to slots in one open-addressed array: a key and its slot share a 16-byte
//! bucket, so a lookup, an insert or a removal touches one cache line where a general hash
//! map touches two (its control bytes, then the bucket). With millions of keys — the disk
//! backend moves keys in and out by the hundred thousand — that miss is most of their cost.
//! Linear probing; a removal marks its bucket, and the marks go when the array is rebuilt
//! (before they and the keys fill more than five eighths of it).

/// No key in the bucket.
const EMPTY: u32 = u32::MAX;
/// The bucket's key was removed; keys after it in the run are still found.
const REMOVED: u32 = u32::MAX - 1;
/// The array grows once more than this fraction of it is in use (out of 8).
const MAX_LOAD_EIGHTHS: usize = 5;
const MIN_BUCKETS: usize = 16;
/// Keys are placed in groups of `1 << GROUP_BITS` buckets.
const GROUP_BITS: u32 = 3;
const GROUP_MASK: usize = (1 << GROUP_BITS) - 1;

#[derive(Clone, Copy)]
struct Bucket {
    key: i64,
    /// `EMPTY` when the bucket holds no key.
    slot: u32,
}

const VACANT: Bucket = Bucket {
    key: 0,
    slot: EMPTY,
};

pub struct IntMap {
    buckets: Vec<Bucket>,
    /// `64 - log2(buckets.len())`: a hash's top bits pick its bucket.
    shift: u32,
    len: usize,
    /// Buckets marked `REMOVED`.
    removed: usize,
}

impl Default for IntMap {
    fn default() -> Self {
        IntMap {
            buckets: vec![VACANT; MIN_BUCKETS],
            shift: 64 - MIN_BUCKETS.trailing_zeros(),
            len: 0,
            removed: 0,
        }
    }
}

impl IntMap {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The first bucket `key` may be in: keys that differ only in their last three bits
    /// share a group of eight buckets (two cache lines, which processors fetch together), in
    /// their order; the rest of the key picks the group. Keys that arrive counting up — and
    /// the disk backend moves them out and back in that order — then cost one miss per
    /// eight, not one each.
    #[inline]
    fn home(&self, key: i64) -> usize {
        let group = (mix(key as u64 >> GROUP_BITS) >> self.shift) as usize & !GROUP_MASK;
        group | (key as usize & GROUP_MASK)
    }

    #[inline]
    fn next(&self, index: usize) -> usize {
        (index + 1) & (self.buckets.len() - 1)
    }

    #[inline]
    pub fn get(&self, key: i64) -> Option<u32> {
        let mut index = self.home(key);
        loop {
            let bucket = self.buckets[index];
            if bucket.slot == EMPTY {
                return None;
            }
            if bucket.key == key && bucket.slot != REMOVED {
                return Some(bucket.slot);
            }
            index = self.next(index);
        }
    }

    /// Sets `key`'s slot (`slot` must be below `u32::MAX - 1`).
    pub fn insert(&mut self, key: i64, slot: u32) {
        debug_assert!(slot < REMOVED);
        if (self.len + self.removed + 1) * 8 > self.buckets.len() * MAX_LOAD_EIGHTHS {
            self.rebuild();
        }
        let mut index = self.home(key);
        let mut vacated = None;
        loop {
            let bucket = &mut self.buckets[index];
            if bucket.slot == EMPTY {
                break;
            }
            if bucket.slot == REMOVED {
                vacated.get_or_insert(index);
            } else if bucket.key == key {
                bucket.slot = slot;
                return;
            }
            index = self.next(index);
        }
        if let Some(at) = vacated {
            index = at;
            self.removed -= 1;
        }
        self.buckets[index] = Bucket { key, slot };
        self.len += 1;
    }

    /// Removes `key`; its slot, if it had one. The bucket is marked, not emptied, unless the
    /// next one is empty: emptying it would cut the run of buckets after it, and shifting
    /// them back instead walks the whole run — with keys counting up, runs are long.
    pub fn remove(&mut self, key: i64) -> Option<u32> {
        let mut index = self.home(key);
        loop {
            let bucket = self.buckets[index];
            if bucket.slot == EMPTY {
                return None;
            }
            if bucket.key == key && bucket.slot != REMOVED {
                break;
            }
            index = self.next(index);
        }
        let removed = self.buckets[index].slot;
        self.len -= 1;
        if self.buckets[self.next(index)].slot == EMPTY {
            self.buckets[index] = VACANT;
        } else {
            self.buckets[index].slot = REMOVED;
            self.removed += 1;
        }
        Some(removed)
    }

    /// Keeps the entries `keep` returns `true` for.
    pub fn retain(&mut self, mut keep: impl FnMut(i64, u32) -> bool) {
        let entries: Vec<Bucket> = self
            .buckets
            .iter()
            .filter(|b| b.slot < REMOVED && keep(b.key, b.slot))
            .copied()
            .collect();
        self.refill(self.buckets.len(), entries);
    }

    /// Drops the marks of removed keys, doubling the array if it is more than half full.
    fn rebuild(&mut self) {
        let size = if self.len * 2 >= self.buckets.len() {
            self.buckets.len() * 2
        } else {
            self.buckets.len()
        };
        let entries: Vec<Bucket> = self
            .buckets
            .iter()
            .filter(|b| b.slot < REMOVED)
            .copied()
            .collect();
        self.refill(size, entries);
    }

    fn refill(&mut self, size: usize, entries: Vec<Bucket>) {
        self.buckets.clear();
        self.buckets.resize(size, VACANT);
        self.shift = 64 - size.trailing_zeros();
        self.len = 0;
        self.removed = 0;
        for bucket in entries {
            self.insert(bucket.key, bucket.slot);
        }
    }

    /// Bytes the map takes.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }
}

/// Spreads every bit of the key over the top bits (a 64-bit finalizer), so keys in a
/// pattern — counting up, multiples of a power of two — land apart.
#[inline]
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn it_agrees_with_a_hash_map_under_inserts_and_removals() {
        let mut map = IntMap::default();
        let mut model: HashMap<i64, u32> = HashMap::new();
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Few distinct keys, some negative and extreme, so runs collide and shift.
            let key = match x % 7 {
                0 => i64::MIN + (x % 5) as i64,
                1 => i64::MAX - (x % 5) as i64,
                _ => (x % 3_000) as i64 - 1_500,
            };
            if x.is_multiple_of(3) {
                assert_eq!(
                    map.remove(key),
                    model.remove(&key),
                    "remove {key} at {step}"
                );
            } else {
                map.insert(key, step);
                model.insert(key, step);
            }
            assert_eq!(map.len(), model.len());
        }
        for key in -1_600..1_600 {
            assert_eq!(map.get(key), model.get(&key).copied(), "{key}");
        }
        map.retain(|key, _| key % 2 == 0);
        model.retain(|key, _| key % 2 == 0);
        for (&key, &slot) in &model {
            assert_eq!(map.get(key), Some(slot));
        }
        assert_eq!(map.len(), model.len());
    }

    #[test]
    fn steady_churn_keeps_it_small() {
        let mut map = IntMap::default();
        for key in 0..1_000_000i64 {
            map.insert(key, key as u32);
            if key >= 1_000 {
                assert_eq!(map.remove(key - 1_000), Some((key - 1_000) as u32));
            }
        }
        assert_eq!(map.len(), 1_000);
        assert!(map.bytes() <= 4_096 * 16, "{} bytes", map.bytes());
        assert_eq!(map.get(999_999), Some(999_999));
        assert_eq!(map.get(5), None);
    }
}
