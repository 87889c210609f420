//! Store keys and values of the disk backend.
//!
//! A value entry moves to the store whole, as a snapshot saves it: the store key is
//! `1 · entry · len · key` — a tag byte, the state entry's declaration index (big-endian
//! `u16`), then the partition key's bytes, length first (big-endian `u32`), so no key's store
//! key starts another's. A list or map view is kept item by item: `2 · entry · len · key ·
//! item`, the item being a map key's encoding or a list element's position (big-endian
//! `u64`), so one key's items are one range of the store, a list's in order. Either value is
//! `stamp · payload`: the stamp is a processing time (little-endian `i64`, ms) no part of the
//! payload was written after, which the TTL filter judges by.
//!
//! The timers of a key on disk are one record, `3 · len · key`, and each of them is also an
//! empty `4 · time · id · len · key` (time with its sign bit flipped and id, both big-endian),
//! so the store lists every timer on disk in firing order.

/// The tag of a whole entry's key.
const ENTRY: u8 = 1;
/// The tag of a view item's key.
const ITEM: u8 = 2;
/// The tag of a key's timers.
const TIMERS: u8 = 3;
/// The tag of a timer in firing order.
const DUE: u8 = 4;

/// A store key under construction. One is kept per store and reused, so building a key
/// allocates nothing once its buffer has grown.
#[derive(Debug, Default)]
pub struct StoreKey {
    bytes: Vec<u8>,
}

impl StoreKey {
    /// `1 · entry · len · key`: where entry `entry` of `key` is kept.
    pub fn entry(&mut self, entry: u16, key: &[u8]) -> &[u8] {
        self.bytes.clear();
        self.bytes.push(ENTRY);
        self.bytes.extend_from_slice(&entry.to_be_bytes());
        push_key(&mut self.bytes, key);
        &self.bytes
    }

    /// `2 · entry · len · key`: the prefix of entry `entry`'s items for `key`.
    pub fn items(&mut self, entry: u16, key: &[u8]) -> &[u8] {
        self.entry(entry, key);
        self.bytes[0] = ITEM;
        &self.bytes
    }

    /// `2 · entry · len · key · item`: where item `item` of entry `entry` of `key` is kept.
    pub fn item(&mut self, entry: u16, key: &[u8], item: &[u8]) -> &[u8] {
        self.items(entry, key);
        self.bytes.extend_from_slice(item);
        &self.bytes
    }

    /// `3 · len · key`: where the timers of `key` are kept while it is on disk.
    pub fn timers(&mut self, key: &[u8]) -> &[u8] {
        self.bytes.clear();
        self.bytes.push(TIMERS);
        push_key(&mut self.bytes, key);
        &self.bytes
    }

    /// `4 · time · id · len · key`: timer `id` of `key`, at `time`, in firing order.
    pub fn due(&mut self, time: i64, id: u64, key: &[u8]) -> &[u8] {
        self.bytes.clear();
        self.bytes.push(DUE);
        self.bytes
            .extend_from_slice(&((time as u64) ^ (1 << 63)).to_be_bytes());
        self.bytes.extend_from_slice(&id.to_be_bytes());
        push_key(&mut self.bytes, key);
        &self.bytes
    }

    /// The prefix of every timer in firing order.
    pub fn due_prefix() -> [u8; 1] {
        [DUE]
    }

    /// The prefix of every key's timers.
    pub fn timers_prefix() -> [u8; 1] {
        [TIMERS]
    }

    /// The time, id and key of a timer's `4 · time · id · len · key`.
    pub fn parse_due(key: &[u8]) -> Option<(i64, u64, &[u8])> {
        if *key.first()? != DUE {
            return None;
        }
        let time = u64::from_be_bytes(key.get(1..9)?.try_into().ok()?) ^ (1 << 63);
        let id = u64::from_be_bytes(key.get(9..17)?.try_into().ok()?);
        let len = u32::from_be_bytes(key.get(17..21)?.try_into().ok()?) as usize;
        Some((time as i64, id, key.get(21..21 + len)?))
    }

    /// The key of a `3 · len · key`.
    pub fn parse_timers(key: &[u8]) -> Option<&[u8]> {
        if *key.first()? != TIMERS {
            return None;
        }
        let len = u32::from_be_bytes(key.get(1..5)?.try_into().ok()?) as usize;
        key.get(5..5 + len)
    }

    /// The prefix of every key's entry `entry`.
    pub fn entries_prefix(entry: u16) -> [u8; 3] {
        let [high, low] = entry.to_be_bytes();
        [ENTRY, high, low]
    }

    /// The prefix of every key's items of entry `entry`.
    pub fn items_prefix(entry: u16) -> [u8; 3] {
        let [high, low] = entry.to_be_bytes();
        [ITEM, high, low]
    }

    /// The entry index of a store key (of an entry or an item).
    pub fn parse_entry(key: &[u8]) -> Option<u16> {
        if !matches!(*key.first()?, ENTRY | ITEM) {
            return None;
        }
        Some(u16::from_be_bytes(key.get(1..3)?.try_into().ok()?))
    }

    /// The partition key's bytes and the item's of an item's store key.
    pub fn parse_item(key: &[u8]) -> Option<(&[u8], &[u8])> {
        if *key.first()? != ITEM {
            return None;
        }
        let len = u32::from_be_bytes(key.get(3..7)?.try_into().ok()?) as usize;
        Some((key.get(7..7 + len)?, key.get(7 + len..)?))
    }

    /// The partition key's bytes in a whole entry's store key.
    pub fn parse_partition_key(key: &[u8]) -> Option<&[u8]> {
        if *key.first()? != ENTRY {
            return None;
        }
        let len = u32::from_be_bytes(key.get(3..7)?.try_into().ok()?) as usize;
        key.get(7..7 + len)
    }
}

/// `len · key`: a partition key, length first.
fn push_key(bytes: &mut Vec<u8>, key: &[u8]) {
    let len = u32::try_from(key.len()).expect("a partition key under 4 GiB");
    bytes.extend_from_slice(&len.to_be_bytes());
    bytes.extend_from_slice(key);
}

/// The first 16 bytes of `bytes` as a number (zeros after a shorter one): byte strings in
/// order have these in order, so sorting by it first and by all the bytes among equals
/// sorts with integer comparisons, mostly.
pub fn leading(bytes: &[u8]) -> u128 {
    let mut first = [0; 16];
    let len = bytes.len().min(16);
    first[..len].copy_from_slice(&bytes[..len]);
    u128::from_be_bytes(first)
}

/// `stamp · payload` into `out` (cleared first).
#[cfg(test)]
pub fn stamped(stamp: i64, payload: &[u8], out: &mut Vec<u8>) {
    out.clear();
    push_stamped(stamp, payload, out);
}

/// `stamp · payload` appended to `out`.
pub fn push_stamped(stamp: i64, payload: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&stamp.to_le_bytes());
    out.extend_from_slice(payload);
}

/// The stamp and payload of a stamped value.
pub fn split_stamp(value: &[u8]) -> Option<(i64, &[u8])> {
    let (stamp, payload) = value.split_at_checked(8)?;
    Some((i64::from_le_bytes(stamp.try_into().ok()?), payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_keys_entry_starts_with_another_keys_and_both_parse_back() {
        let mut key = StoreKey::default();
        let short = key.entry(2, b"ab").to_vec();
        // "abc" must not fall under "ab", though its bytes start the same.
        let longer = key.entry(2, b"abc").to_vec();
        assert!(!longer.starts_with(&short));
        let other_entry = key.entry(3, b"ab").to_vec();
        assert!(other_entry.starts_with(&StoreKey::entries_prefix(3)));
        assert!(!short.starts_with(&StoreKey::entries_prefix(3)));
        assert_eq!(StoreKey::parse_entry(&short), Some(2));
        assert_eq!(StoreKey::parse_partition_key(&longer), Some(&b"abc"[..]));
        assert_eq!(StoreKey::parse_entry(&[9, 0, 0]), None, "another tag");
    }

    #[test]
    fn items_of_a_key_share_its_prefix_and_no_other_keys() {
        let mut key = StoreKey::default();
        let item = key.item(4, b"ab", b"x1").to_vec();
        assert!(item.starts_with(key.items(4, b"ab")));
        // The key "abx" with item "1" must not fall in "ab"'s range.
        let other = key.item(4, b"abx", b"1").to_vec();
        assert!(!other.starts_with(key.items(4, b"ab")));
        assert!(item.starts_with(&StoreKey::items_prefix(4)));
        assert!(!item.starts_with(&StoreKey::entries_prefix(4)));
        assert_eq!(StoreKey::parse_entry(&item), Some(4));
        assert_eq!(StoreKey::parse_item(&item), Some((&b"ab"[..], &b"x1"[..])));
        assert_eq!(
            StoreKey::parse_partition_key(&item),
            None,
            "an item, not an entry"
        );
        let entry = key.entry(4, b"ab").to_vec();
        assert_eq!(StoreKey::parse_item(&entry), None);
    }

    #[test]
    fn timers_on_disk_list_in_firing_order_and_parse_back() {
        let mut key = StoreKey::default();
        let order = [(-5, 9), (-5, 10), (0, 1), (7, 0), (i64::MAX, 2)];
        let keys: Vec<Vec<u8>> = order
            .iter()
            .map(|&(time, id)| key.due(time, id, b"zz").to_vec())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "time first, then id");
        assert_eq!(StoreKey::parse_due(&keys[0]), Some((-5, 9, &b"zz"[..])));
        assert!(keys[0].starts_with(&StoreKey::due_prefix()));
        let record = key.timers(b"abc").to_vec();
        assert_eq!(StoreKey::parse_timers(&record), Some(&b"abc"[..]));
        assert_eq!(StoreKey::parse_entry(&record), None, "no entry: no TTL");
        assert_eq!(StoreKey::parse_entry(&keys[0]), None);
    }

    #[test]
    fn leading_bytes_order_as_the_bytes_do() {
        let mut keys: Vec<&[u8]> = vec![
            b"",
            b"\0",
            b"a",
            b"ab",
            b"ab\0",
            b"abc",
            b"b",
            &[0xff; 20],
            &[0xff; 16],
            b"0123456789abcdefX",
            b"0123456789abcdef",
            b"0123456789abcdefA",
        ];
        let mut by_leading = keys.clone();
        by_leading.sort_by(|a, b| leading(a).cmp(&leading(b)).then_with(|| a.cmp(b)));
        keys.sort();
        assert_eq!(by_leading, keys);
    }

    #[test]
    fn stamps_round_trip_and_short_values_do_not_parse() {
        let mut value = Vec::new();
        stamped(-42, b"payload", &mut value);
        assert_eq!(split_stamp(&value), Some((-42, &b"payload"[..])));
        assert_eq!(split_stamp(&value[..7]), None);
    }
}
