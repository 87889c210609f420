//! Which keys may have value entries or timers on disk: a filter of the keys moved out. A key
//! arriving for the first time is then not looked for in the store — a miss there searches
//! every memtable and every table's filter, and was most of the cost of new keys. The filter
//! says "maybe" for every key moved out and "no" for all but about one in a hundred others.
//!
//! It is a blocked Bloom filter (each key's bits in one 64-byte block: one cache miss a
//! probe) that grows by layers, each four times the one before, as more keys move out — the
//! number of keys is not known in advance, and a full layer is never made less selective.
//!
//! A key is added to the newest layer unless that layer has it already; older layers are not
//! asked (one cache miss an insert, not one a layer). A key added again after a new layer
//! began is counted twice, but at most once a layer, and a layer holding more keys than are
//! ever moved out never fills: the filter stays within a few times the keys moved out.
//!
//! A filter may be given a size limit (a share of the memory budget): a layer that would take
//! it past the limit is not made, and the filter gives up — it says "maybe" for every key from
//! then on, so keys are looked for in the store again, and its memory is freed.

/// Keys the first layer is made for.
const FIRST_LAYER_KEYS: usize = 1 << 16;
/// Each new layer holds this many times the keys of the one before.
const GROWTH: usize = 4;
/// Filter bits per key: with six bits set a key, about 1 % false "maybe"s a full layer.
const BITS_PER_KEY: usize = 12;
const PROBES: u32 = 6;
const BLOCK_BITS: usize = 512;

pub struct MovedOut {
    layers: Vec<Layer>,
    /// The most bytes the layers may take.
    limit: u64,
    /// Past its limit: every key may be on disk.
    gave_up: bool,
}

impl Default for MovedOut {
    fn default() -> Self {
        MovedOut::with_limit(u64::MAX)
    }
}

struct Layer {
    blocks: Vec<[u64; BLOCK_BITS / 64]>,
    capacity: usize,
    len: usize,
}

impl MovedOut {
    /// A filter that gives up rather than take more than `limit` bytes.
    pub fn with_limit(limit: u64) -> Self {
        MovedOut {
            layers: Vec::new(),
            limit,
            gave_up: false,
        }
    }

    /// Whether it gave up (every key may be on disk).
    #[cfg(test)]
    pub fn gave_up(&self) -> bool {
        self.gave_up
    }

    /// Notes that `key` has entries or timers on disk.
    #[cfg(test)]
    pub fn insert(&mut self, key: &[u8]) {
        self.insert_hash(hash(key));
    }

    /// Notes that the keys of `hashes` (from [`key_hash`]) have entries or timers on disk.
    /// Many at once: each costs a cache miss, and a loop doing nothing else lets the
    /// processor wait for several of them together.
    pub fn insert_all(&mut self, hashes: &[u64]) {
        for &hash in hashes {
            self.insert_hash(hash);
        }
    }

    #[inline]
    fn insert_hash(&mut self, hash: u64) {
        if self.gave_up || self.layers.last().is_some_and(|layer| layer.contains(hash)) {
            return;
        }
        if self
            .layers
            .last()
            .is_none_or(|layer| layer.len >= layer.capacity)
        {
            let capacity = self
                .layers
                .last()
                .map_or(FIRST_LAYER_KEYS, |layer| layer.capacity * GROWTH);
            if self.bytes() + Layer::bytes_for(capacity) > self.limit {
                self.gave_up = true;
                self.layers = Vec::new();
                return;
            }
            self.layers.push(Layer::new(capacity));
        }
        self.layers.last_mut().expect("pushed above").insert(hash);
    }

    /// Whether no key was moved out.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty() && !self.gave_up
    }

    /// Whether `key` may have entries or timers on disk (`false`: it certainly has none).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        let hash = hash(key);
        self.gave_up || self.layers.iter().any(|layer| layer.contains(hash))
    }

    /// Memory the filter takes (counted against the memory budget).
    pub fn bytes(&self) -> u64 {
        self.layers
            .iter()
            .map(|layer| (layer.blocks.len() * BLOCK_BITS / 8) as u64)
            .sum()
    }
}

impl Layer {
    fn new(capacity: usize) -> Self {
        Layer {
            blocks: vec![[0; BLOCK_BITS / 64]; Layer::blocks_for(capacity)],
            capacity,
            len: 0,
        }
    }

    fn blocks_for(capacity: usize) -> usize {
        (capacity * BITS_PER_KEY).div_ceil(BLOCK_BITS).max(1)
    }

    fn bytes_for(capacity: usize) -> u64 {
        (Layer::blocks_for(capacity) * BLOCK_BITS / 8) as u64
    }

    /// The block of `hash` (from its low half) and its bits (from a mix of all of it).
    fn place(&self, hash: u64) -> (usize, u64) {
        let block = ((hash & u64::from(u32::MAX)) * self.blocks.len() as u64) >> 32;
        (block as usize, mix(hash ^ 0x9e37_79b9_7f4a_7c15))
    }

    fn insert(&mut self, hash: u64) {
        let (block, mut bits) = self.place(hash);
        let block = &mut self.blocks[block];
        for _ in 0..PROBES {
            let bit = (bits % BLOCK_BITS as u64) as usize;
            block[bit / 64] |= 1 << (bit % 64);
            bits >>= 9;
        }
        self.len += 1;
    }

    fn contains(&self, hash: u64) -> bool {
        let (block, mut bits) = self.place(hash);
        let block = &self.blocks[block];
        (0..PROBES).all(|_| {
            let bit = (bits % BLOCK_BITS as u64) as usize;
            bits >>= 9;
            block[bit / 64] & (1 << (bit % 64)) != 0
        })
    }
}

/// What [`MovedOut::insert_all`] takes for a key.
pub fn key_hash(key: &[u8]) -> u64 {
    hash(key)
}

/// A 64-bit hash of key bytes: eight bytes at a time, then a full mix.
fn hash(bytes: &[u8]) -> u64 {
    let mut hash = 0x2545_f491_4f6c_dd1d ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        hash = (hash ^ word)
            .wrapping_mul(0x9fb2_1c65_1e98_df25)
            .rotate_left(31);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        hash = (hash ^ u64::from_le_bytes(word))
            .wrapping_mul(0x9fb2_1c65_1e98_df25)
            .rotate_left(31);
    }
    mix(hash)
}

/// Spreads every input bit over every output bit (a 64-bit finalizer).
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_moved_out_again_and_again_keep_the_filter_within_a_few_times_their_number() {
        let mut filter = MovedOut::default();
        let keys = 100_000u64;
        for _ in 0..20 {
            for key in 0..keys {
                filter.insert(&key.to_be_bytes());
            }
        }
        assert!((0..keys).all(|key| filter.may_contain(&key.to_be_bytes())));
        assert!(
            filter.bytes() < keys * BITS_PER_KEY as u64 / 8 * 4,
            "{} bytes in {} layers",
            filter.bytes(),
            filter.layers.len()
        );
    }

    #[test]
    fn every_key_moved_out_may_be_on_disk_and_few_others_are_said_to() {
        let mut filter = MovedOut::default();
        assert!(!filter.may_contain(b"anything"), "an empty filter");
        // Enough keys for several layers.
        let moved = 1_000_000u64;
        for key in 0..moved {
            filter.insert(&key.to_be_bytes());
        }
        assert!(filter.layers.len() >= 3, "{} layers", filter.layers.len());
        assert!((0..moved).all(|key| filter.may_contain(&key.to_be_bytes())));
        let others = 200_000u64;
        let maybes = (moved..moved + others)
            .filter(|key| filter.may_contain(&key.to_be_bytes()))
            .count();
        // About 1 % a full layer; the layers together stay under 3 %.
        assert!(maybes < others as usize * 3 / 100, "{maybes} of {others}");
        let strings = (0..others)
            .filter(|key| filter.may_contain(format!("key-{key}").as_bytes()))
            .count();
        assert!(strings < others as usize * 3 / 100, "{strings} of {others}");
        // About BITS_PER_KEY bits a key, with the last layer partly filled.
        assert!(
            filter.bytes() < moved * BITS_PER_KEY as u64 / 8 * 3,
            "{}",
            filter.bytes()
        );
    }

    #[test]
    fn a_filter_past_its_limit_says_maybe_for_every_key_and_frees_its_memory() {
        let limit = 1 << 20;
        let mut filter = MovedOut::with_limit(limit);
        let mut keys = 0u64;
        while !filter.gave_up() {
            assert!(filter.bytes() <= limit);
            filter.insert(&keys.to_be_bytes());
            keys += 1;
            assert!(keys < 10_000_000, "it gives up");
        }
        assert!(keys > 100_000, "it held keys until the next layer: {keys}");
        assert_eq!(filter.bytes(), 0);
        assert!(!filter.is_empty());
        assert!(filter.may_contain(b"never moved out"));
        assert!((0..keys).all(|key| filter.may_contain(&key.to_be_bytes())));
    }

    #[test]
    fn a_key_moved_out_again_is_not_counted_again() {
        let mut filter = MovedOut::default();
        for _ in 0..3 {
            for key in 0..1_000u32 {
                filter.insert(&key.to_le_bytes());
            }
        }
        assert_eq!(filter.layers.len(), 1);
        assert!(filter.layers[0].len <= 1_000);
    }
}
