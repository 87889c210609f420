//! Store keys and values of the disk backend.
//!
//! A key starts with its kind, then the state entry (its declaration index) and the
//! partition key's bytes, length first — so everything one key holds in one entry (a whole
//! `MapView`, say) is one prefix, and no key's prefix is another key's:
//!
//! | kind | key | value |
//! |---|---|---|
//! | value | `1 · entry · len · key` | `written · value` |
//! | list element | `2 · entry · len · key · seq` | `written · element` |
//! | map entry | `3 · entry · len · key · map key` | `written · value` |
//! | timer, by time | `4 · time · id` | `len · key · name` |
//! | timer, by key | `5 · 0 · len · key · name` | `time · id` |
//!
//! `entry` is a big-endian `u16`, `len` a big-endian `u32`, `seq` and `id` big-endian `u64`,
//! `time` an `i64` mapped to an order-preserving `u64`, `written` the entry's write time in
//! processing-time milliseconds (little-endian `i64`, what TTL is measured from), `name` a
//! timer name's number. Values are postcard, as in snapshots; map keys too.
//!
//! Today the disk backend moves a key's whole entry in and out (a value kind key, holding
//! the entry as a snapshot saves it, stamped with the time it moved out); the other kinds
//! are for views and timers kept entry by entry.

/// What a store key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Value = 1,
    ListElement = 2,
    MapEntry = 3,
    TimerByTime = 4,
    TimerOfKey = 5,
}

impl Kind {
    fn of(byte: u8) -> Option<Kind> {
        Some(match byte {
            1 => Kind::Value,
            2 => Kind::ListElement,
            3 => Kind::MapEntry,
            4 => Kind::TimerByTime,
            5 => Kind::TimerOfKey,
            _ => return None,
        })
    }

    /// Whether entries of this kind carry a write time (and so may expire).
    pub fn is_stamped(self) -> bool {
        matches!(self, Kind::Value | Kind::ListElement | Kind::MapEntry)
    }
}

/// A store key under construction. One is kept per store and reused, so building a key
/// allocates nothing once its buffer has grown.
#[derive(Debug, Default)]
pub struct StoreKey {
    bytes: Vec<u8>,
    /// Where the part after the partition key starts.
    prefix: usize,
}

impl StoreKey {
    /// `kind · entry · len · key`: the prefix of everything `key` holds in `entry`.
    pub fn entry(&mut self, kind: Kind, entry: u16, key: &[u8]) -> &mut Self {
        self.bytes.clear();
        self.bytes.push(kind as u8);
        self.bytes.extend_from_slice(&entry.to_be_bytes());
        let len = u32::try_from(key.len()).expect("a partition key under 4 GiB");
        self.bytes.extend_from_slice(&len.to_be_bytes());
        self.bytes.extend_from_slice(key);
        self.prefix = self.bytes.len();
        self
    }

    /// The prefix followed by a list element's sequence number.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn seq(&mut self, seq: u64) -> &[u8] {
        self.bytes.truncate(self.prefix);
        self.bytes.extend_from_slice(&seq.to_be_bytes());
        &self.bytes
    }

    /// The prefix followed by a map key's (or a timer name's) bytes.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn suffix(&mut self, suffix: &[u8]) -> &[u8] {
        self.bytes.truncate(self.prefix);
        self.bytes.extend_from_slice(suffix);
        &self.bytes
    }

    /// The prefix alone.
    pub fn prefix(&self) -> &[u8] {
        &self.bytes[..self.prefix]
    }

    /// `4 · time · id`: a timer in firing order.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn timer_at(time: i64, id: u64) -> [u8; 17] {
        let mut key = [0; 17];
        key[0] = Kind::TimerByTime as u8;
        key[1..9].copy_from_slice(&ordered(time).to_be_bytes());
        key[9..].copy_from_slice(&id.to_be_bytes());
        key
    }

    /// The time and id of a `timer_at` key.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn parse_timer_at(key: &[u8]) -> Option<(i64, u64)> {
        let (&kind, rest) = key.split_first()?;
        if Kind::of(kind) != Some(Kind::TimerByTime) || rest.len() != 16 {
            return None;
        }
        let time = u64::from_be_bytes(rest[..8].try_into().ok()?);
        let id = u64::from_be_bytes(rest[8..].try_into().ok()?);
        Some((unordered(time), id))
    }

    /// The partition key's bytes in a key that has them (not a timer by time).
    pub fn parse_partition_key(key: &[u8]) -> Option<&[u8]> {
        let kind = Kind::of(*key.first()?)?;
        if kind == Kind::TimerByTime {
            return None;
        }
        let len = u32::from_be_bytes(key.get(3..7)?.try_into().ok()?) as usize;
        key.get(7..7 + len)
    }

    /// The kind and entry of a stamped key (the TTL filter's question).
    pub fn parse_entry(key: &[u8]) -> Option<(Kind, u16)> {
        let kind = Kind::of(*key.first()?)?;
        let entry = u16::from_be_bytes(key.get(1..3)?.try_into().ok()?);
        kind.is_stamped().then_some((kind, entry))
    }
}

/// `written · payload` into `out` (cleared first).
pub fn stamped(written: i64, payload: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&written.to_le_bytes());
    out.extend_from_slice(payload);
}

/// The write time and payload of a stamped value.
pub fn split_stamp(value: &[u8]) -> Option<(i64, &[u8])> {
    let (written, payload) = value.split_at_checked(8)?;
    Some((i64::from_le_bytes(written.try_into().ok()?), payload))
}

/// `time` as a `u64` whose big-endian bytes sort as the times do.
#[cfg_attr(not(test), allow(dead_code))]
fn ordered(time: i64) -> u64 {
    (time as u64) ^ (1 << 63)
}

#[cfg_attr(not(test), allow(dead_code))]
fn unordered(bits: u64) -> i64 {
    (bits ^ (1 << 63)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keys_items_share_its_prefix_and_no_other_keys() {
        let mut key = StoreKey::default();
        let short = key.entry(Kind::MapEntry, 2, b"ab").suffix(b"x").to_vec();
        let prefix_of_short = key.prefix().to_vec();
        // "ab" + "cx" must not fall under "ab"'s prefix, though its bytes start the same.
        let longer = key.entry(Kind::MapEntry, 2, b"abc").suffix(b"x").to_vec();
        assert!(short.starts_with(&prefix_of_short));
        assert!(!longer.starts_with(&prefix_of_short));
        let other_entry = key.entry(Kind::MapEntry, 3, b"ab").suffix(b"x").to_vec();
        assert!(!other_entry.starts_with(&prefix_of_short));
        assert_eq!(StoreKey::parse_entry(&short), Some((Kind::MapEntry, 2)));
        assert_eq!(StoreKey::parse_partition_key(&longer), Some(&b"abc"[..]));
        assert_eq!(
            StoreKey::parse_entry(&StoreKey::timer_at(5, 1)),
            None,
            "timers have no TTL"
        );
    }

    #[test]
    fn list_elements_and_timers_sort_in_their_order() {
        let mut key = StoreKey::default();
        key.entry(Kind::ListElement, 0, b"k");
        let (first, second) = (key.seq(9).to_vec(), key.seq(256).to_vec());
        assert!(first < second);
        let times = [i64::MIN, -1_000, -1, 0, 1, 1_000, i64::MAX];
        let keys: Vec<[u8; 17]> = times.iter().map(|&t| StoreKey::timer_at(t, 7)).collect();
        assert!(keys.windows(2).all(|pair| pair[0] < pair[1]));
        for (&time, key) in times.iter().zip(&keys) {
            assert_eq!(StoreKey::parse_timer_at(key), Some((time, 7)));
        }
        assert!(StoreKey::timer_at(3, 1) < StoreKey::timer_at(3, 2));
    }

    #[test]
    fn stamps_round_trip_and_short_values_do_not_parse() {
        let mut value = Vec::new();
        stamped(-42, b"payload", &mut value);
        assert_eq!(split_stamp(&value), Some((-42, &b"payload"[..])));
        assert_eq!(split_stamp(&value[..7]), None);
    }
}
