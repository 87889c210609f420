//! A function's state as the runtime sees it, without its types: the keyed-state unit checks,
//! clears, snapshots and restores entries through these traits; generated code reaches the
//! typed stores directly.

use std::any::Any;

use crate::Error;

/// One state entry for every key slot of a processor.
///
/// `save` writes a slot's live entry with its TTL stamps (postcard: `(written, value)` for a
/// value, `[(written, element)]` for a list, `[(key, written, value)]` for a map); `restore`
/// reads what `save` wrote into a slot of another store of the same type.
pub trait EntryStore: Send {
    /// Whether `slot` holds no entry in memory.
    fn is_absent(&self, slot: u32) -> bool;
    /// Removes `slot`'s entry, wherever it is kept.
    fn clear(&mut self, slot: u32) -> Result<(), Error>;
    /// `slot` now stands for the key whose bytes are `key` (a store that keeps entries by key
    /// bytes needs it; one that keeps them by slot ignores it).
    fn bind(&mut self, slot: u32, key: &[u8]);
    /// `slot` is given back: what the store holds for it in memory goes; what it keeps
    /// elsewhere by key bytes stays.
    fn release(&mut self, slot: u32);
    /// Slots holding an entry in memory.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slots holding an entry, in slot order.
    fn occupied(&self) -> Vec<u32>;
    /// Appends `slot`'s entry as of processing time `now` (without what expired by then) to
    /// `out`; `false`, writing nothing, if it has none.
    fn save(&self, slot: u32, now: i64, out: &mut Vec<u8>) -> Result<bool, Error>;
    /// Replaces `slot`'s entry by one `save` wrote.
    fn restore(&mut self, slot: u32, bytes: &[u8]) -> Result<(), Error>;
}

/// Every state entry of one function (the struct `#[ptf]` generates, one store per
/// `#[state]` parameter, in declaration order).
pub trait StateStores: Send + 'static {
    /// Entry `index` (declaration order), if there is one.
    fn entry(&self, index: usize) -> Option<&dyn EntryStore>;
    fn entry_mut(&mut self, index: usize) -> Option<&mut dyn EntryStore>;
    /// The typed stores, for the function's own calls.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl dyn StateStores {
    /// The entries, in declaration order.
    pub fn entries(&self) -> impl Iterator<Item = &dyn EntryStore> {
        (0..).map_while(|index| self.entry(index))
    }

    /// Whether `slot` holds no entry in memory (so its key may give the slot back).
    pub fn is_absent(&self, slot: u32) -> bool {
        self.entries().all(|entry| entry.is_absent(slot))
    }

    /// Clears every entry of `slot`.
    pub fn clear(&mut self, slot: u32) -> Result<(), Error> {
        let mut index = 0;
        while let Some(entry) = self.entry_mut(index) {
            entry.clear(slot)?;
            index += 1;
        }
        Ok(())
    }

    /// Binds `slot` to `key` in every entry (see [`EntryStore::bind`]).
    pub fn bind(&mut self, slot: u32, key: &[u8]) {
        let mut index = 0;
        while let Some(entry) = self.entry_mut(index) {
            entry.bind(slot, key);
            index += 1;
        }
    }

    /// Gives `slot` back in every entry (see [`EntryStore::release`]).
    pub fn release(&mut self, slot: u32) {
        let mut index = 0;
        while let Some(entry) = self.entry_mut(index) {
            entry.release(slot);
            index += 1;
        }
    }

    /// Entries held, over every slot.
    pub fn len(&self) -> usize {
        self.entries().map(EntryStore::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The typed stores of a function whose stores are `S`.
    pub fn downcast_mut<S: StateStores>(&mut self) -> Result<&mut S, Error> {
        self.as_any_mut()
            .downcast_mut::<S>()
            .ok_or_else(|| Error::msg("the processor was handed the state of another function"))
    }
}

/// The state of a function without `#[state]` entries.
#[derive(Debug, Default)]
pub struct NoState;

impl StateStores for NoState {
    fn entry(&self, _index: usize) -> Option<&dyn EntryStore> {
        None
    }

    fn entry_mut(&mut self, _index: usize) -> Option<&mut dyn EntryStore> {
        None
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// `value` in the snapshot encoding.
pub(crate) fn encode<T: serde::Serialize>(value: &T, out: &mut Vec<u8>) -> Result<(), Error> {
    *out = postcard::to_extend(value, std::mem::take(out))
        .map_err(|e| Error::msg(format!("a state entry could not be encoded: {e}")))?;
    Ok(())
}

/// The entries of a view that are `live`, encoded (nothing when none is).
pub(crate) fn encode_live<E: serde::Serialize>(
    live: Vec<E>,
    out: &mut Vec<u8>,
) -> Result<bool, Error> {
    if live.is_empty() {
        return Ok(false);
    }
    encode(&live, out)?;
    Ok(true)
}

/// A value from the snapshot encoding. Every byte must be read: bytes left over mean the
/// value was saved by another version of the type (one with more fields), which would
/// otherwise restore as a silently wrong value.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    let unreadable = |what: String| {
        Error::msg(format!(
            "the saved value does not read as `{}` (was it saved by another version of \
             the type?): {what}",
            readable_type_name(std::any::type_name::<T>())
        ))
    };
    let (value, rest) = postcard::take_from_bytes(bytes).map_err(|e| unreadable(e.to_string()))?;
    if !rest.is_empty() {
        return Err(unreadable(format!("{} bytes are left over", rest.len())));
    }
    Ok(value)
}

/// A type's name as its user wrote it: without module paths, and without the wrapper that
/// stamps values with their write time (`a::Stamped<b::Level>` reads `Level`).
fn readable_type_name(name: &str) -> String {
    let mut readable = String::with_capacity(name.len());
    let mut segment = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            segment.push(c);
            continue;
        }
        readable.push_str(segment.rsplit("::").next().unwrap_or(""));
        segment.clear();
        readable.push(c);
    }
    readable.push_str(segment.rsplit("::").next().unwrap_or(""));
    const WRAPPER: &str = "Stamped<";
    while let Some(start) = readable.find(WRAPPER) {
        let inner = start + WRAPPER.len();
        let mut depth = 1;
        let end = readable[inner..].char_indices().find_map(|(at, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(inner + at)
        });
        let Some(end) = end else { break };
        readable.replace_range(end..=end, "");
        readable.replace_range(start..inner, "");
    }
    readable
}

#[cfg(test)]
mod readable_type_name_tests {
    use super::readable_type_name;

    #[test]
    fn paths_and_the_stamp_wrapper_go() {
        assert_eq!(
            readable_type_name("udf_core::ptf::state::ttl::Stamped<my_crate::state::Level>"),
            "Level"
        );
        assert_eq!(
            readable_type_name(
                "alloc::vec::Vec<(alloc::string::String, udf_core::ttl::Stamped<core::option::Option<i64>>)>"
            ),
            "Vec<(String, Option<i64>)>"
        );
    }
}
