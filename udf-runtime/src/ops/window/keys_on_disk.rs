//! Which keys may have open sessions on disk: a Bloom filter over the keys moved out, so that
//! a key new in memory is looked for in the store only when it may be there. Looking costs a
//! prefix scan of the store (no Bloom filter of the store's own serves a scan); over a
//! million keys that each came back after their session had closed, those scans took most
//! of `session_agg_disk_1m`'s time.
//!
//! Keys cannot be taken out of a Bloom filter: a key whose sessions came back or closed stays
//! in it until the filter is built again from the sessions on disk, once it holds twice as many
//! keys as there are sessions on disk (and a few thousand) — a cost per key moved out that
//! does not grow. Sixteen bits per key it is sized for and three probes: about one key in
//! two hundred not on disk is looked for anyway.

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

/// Keys the filter is sized for, at the least.
const MIN_KEYS: usize = 4096;
/// Bits per key the filter is sized for.
const BITS_PER_KEY: usize = 16;
/// Probes per key.
const PROBES: u64 = 3;

pub(super) struct MaybeOnDisk {
    bits: Vec<u64>,
    /// Keys put in since it was built.
    keys: usize,
    /// Keys it is sized for.
    capacity: usize,
}

impl MaybeOnDisk {
    /// An empty filter for `capacity` keys (at the least [`MIN_KEYS`]).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(MIN_KEYS);
        let words = (capacity * BITS_PER_KEY / 64).next_power_of_two();
        MaybeOnDisk {
            bits: vec![0; words],
            keys: 0,
            capacity,
        }
    }

    /// Whether it holds as many keys as it was sized for: time to build it again.
    pub fn is_full(&self) -> bool {
        self.keys >= self.capacity
    }

    pub fn insert(&mut self, key: &[u8]) {
        for bit in self.probes(key) {
            self.bits[bit / 64] |= 1 << (bit % 64);
        }
        self.keys += 1;
    }

    /// False when `key` is certainly not on disk.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.probes(key)
            .all(|bit| self.bits[bit / 64] & (1 << (bit % 64)) != 0)
    }

    fn probes(&self, key: &[u8]) -> impl Iterator<Item = usize> + use<> {
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(key);
        // Two halves of one hash make the probes (Kirsch and Mitzenmacher).
        let (first, step) = (hash & 0xffff_ffff, (hash >> 32) | 1);
        let mask = (self.bits.len() * 64 - 1) as u64;
        (0..PROBES).map(move |i| (first.wrapping_add(i.wrapping_mul(step)) & mask) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::MaybeOnDisk;

    #[test]
    fn keys_put_in_are_found_and_few_others_are() {
        let mut filter = MaybeOnDisk::new(10_000);
        for key in 0..10_000u32 {
            filter.insert(&key.to_be_bytes());
        }
        assert!((0..10_000u32).all(|key| filter.may_contain(&key.to_be_bytes())));
        assert!(filter.is_full());
        let false_positives = (10_000..110_000u32)
            .filter(|key| filter.may_contain(&key.to_be_bytes()))
            .count();
        assert!(false_positives < 1_000, "{false_positives} of 100,000");
    }
}
