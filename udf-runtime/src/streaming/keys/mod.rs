//! Key slots: each PARTITION BY key a processor holds state for gets a small number, which
//! indexes the function's state stores; slots of keys whose state became empty are reused.
//!
//! One integer key column (the common case) is looked up by value, small non-negative ones
//! in a vector indexed by the key (`integer.rs`), larger ones in an open-addressed map of
//! their own (`int_map.rs`); any other keys are hashed in Arrow's row
//! format (`hashed.rs`). Slots are the table's own business: outside it — in
//! snapshots — a key is its bytes (`key_bytes`), which mean the same in every run.

mod hashed;
mod int_map;
mod integer;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType as ArrowType, Int64Type};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{DataFusionError, Result};

use hashed::HashedSlots;
use integer::IntegerSlots;

pub struct KeyTable {
    lookup: Lookup,
    slots: Allocator,
}

enum Lookup {
    /// No PARTITION BY: every row has slot 0; whether it is in use.
    Single(bool),
    /// One integer column.
    Integer(IntegerSlots),
    /// Anything else, in Arrow's row format.
    Rows(RowConverter, HashedSlots<Box<[u8]>>),
}

/// Hands out slot numbers: freed ones first, then new ones.
#[derive(Default)]
pub struct Allocator {
    free: Vec<u32>,
    /// Slots handed out so far (in use or free).
    assigned: u32,
    /// The slots taken since they were last asked for, when someone asks (see
    /// `KeyTable::log_taken_slots`).
    taken: Option<Vec<u32>>,
}

impl Allocator {
    fn take(&mut self) -> u32 {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.assigned += 1;
            self.assigned - 1
        });
        if let Some(taken) = &mut self.taken {
            taken.push(slot);
        }
        slot
    }
}

fn is_integer(data_type: &ArrowType) -> bool {
    matches!(
        data_type,
        ArrowType::Int8
            | ArrowType::Int16
            | ArrowType::Int32
            | ArrowType::Int64
            | ArrowType::UInt8
            | ArrowType::UInt16
            | ArrowType::UInt32
    )
}

impl KeyTable {
    pub fn new(key_types: &[ArrowType]) -> Result<Self> {
        let lookup = match key_types {
            [] => Lookup::Single(false),
            [single] if is_integer(single) => Lookup::Integer(IntegerSlots::new()),
            _ => Lookup::Rows(
                RowConverter::new(key_types.iter().cloned().map(SortField::new).collect())?,
                HashedSlots::new(),
            ),
        };
        Ok(KeyTable {
            lookup,
            slots: Allocator::default(),
        })
    }

    /// The slot of each row's key into `out` (cleared first), assigning slots to new keys.
    pub fn slots(&mut self, keys: &[ArrayRef], rows: usize, out: &mut Vec<u32>) -> Result<()> {
        out.clear();
        out.reserve(rows);
        let allocator = &mut self.slots;
        match &mut self.lookup {
            Lookup::Single(held) => {
                if !*held && rows > 0 {
                    *held = true;
                    if let Some(taken) = &mut allocator.taken {
                        taken.push(0);
                    }
                }
                out.resize(rows, 0)
            }
            Lookup::Integer(table) => {
                let column = cast(&keys[0], &ArrowType::Int64)?;
                let values = column.as_primitive::<Int64Type>();
                if values.null_count() == 0 {
                    out.extend(values.values().iter().map(|v| table.slot(*v, allocator)));
                } else {
                    out.extend(values.iter().map(|value| match value {
                        Some(value) => table.slot(value, allocator),
                        None => table.null_slot(allocator),
                    }));
                }
            }
            Lookup::Rows(converter, table) => {
                let converted = converter.convert_columns(keys)?;
                out.extend(converted.iter().map(|row| {
                    let bytes = row.as_ref();
                    table.slot(bytes, || Box::from(bytes), allocator)
                }));
            }
        }
        Ok(())
    }

    /// Frees `slot` for another key (its state is empty).
    pub fn release(&mut self, slot: u32) {
        let released = match &mut self.lookup {
            Lookup::Single(held) => {
                *held = false;
                false
            }
            Lookup::Integer(table) => table.release(slot),
            Lookup::Rows(_, table) => table.release(slot),
        };
        if released {
            self.slots.free.push(slot);
        }
    }

    /// The key columns of `slots` (which must be in use), of the key types.
    pub fn key_arrays(&self, slots: &[u32], key_types: &[ArrowType]) -> Result<Vec<ArrayRef>> {
        match &self.lookup {
            Lookup::Single(_) => Ok(Vec::new()),
            Lookup::Integer(table) => {
                let values: Int64Array = slots
                    .iter()
                    .map(|slot| table.key(*slot).flatten())
                    .collect();
                Ok(vec![cast(&values, &key_types[0])?])
            }
            Lookup::Rows(converter, table) => {
                let parser = converter.parser();
                let rows: Vec<_> = slots
                    .iter()
                    .map(|slot| {
                        let bytes = table.key(*slot).expect("a slot with timers keeps its key");
                        parser.parse(bytes)
                    })
                    .collect();
                Ok(converter.convert_rows(rows)?)
            }
        }
    }

    /// From now on, keeps the slots handed to keys for [`take_new_slots`](Self::take_new_slots)
    /// (a disk backend loads the state of those keys).
    pub fn log_taken_slots(&mut self) {
        self.slots.taken.get_or_insert_with(Vec::new);
    }

    /// The slots handed to keys since the last call (with `log_taken_slots`) into `out`.
    pub fn take_new_slots(&mut self, out: &mut Vec<u32>) {
        out.clear();
        if let Some(taken) = &mut self.slots.taken {
            out.append(taken);
        }
    }

    /// Keys holding a slot.
    pub fn len(&self) -> usize {
        match &self.lookup {
            Lookup::Single(held) => usize::from(*held),
            Lookup::Integer(table) => table.len(),
            Lookup::Rows(_, table) => table.len(),
        }
    }
}

/// Keys by their bytes, for snapshots and lookups from outside the processor's calls (see
/// `streaming/state/`).
#[cfg_attr(not(test), allow(dead_code))]
impl KeyTable {
    /// The bytes of the key in `slot` (which must be in use): an integer's 8 bytes in its
    /// order (`integer_key_bytes`; none for NULL), the row-format bytes of other keys, nothing
    /// without keys.
    pub fn key_bytes(&self, slot: u32) -> Option<Vec<u8>> {
        let mut bytes = Vec::new();
        self.append_key_bytes(slot, &mut bytes).then_some(bytes)
    }

    /// Appends the bytes of the key in `slot` (see `key_bytes`) to `out`; `false`, appending
    /// nothing, if the slot is not in use.
    pub fn append_key_bytes(&self, slot: u32, out: &mut Vec<u8>) -> bool {
        match &self.lookup {
            Lookup::Single(held) => *held,
            Lookup::Integer(table) => match table.key(slot) {
                None => false,
                Some(None) => true,
                Some(Some(value)) => {
                    out.extend_from_slice(&integer_key_bytes(value));
                    true
                }
            },
            Lookup::Rows(_, table) => match table.key(slot) {
                None => false,
                Some(bytes) => {
                    out.extend_from_slice(bytes);
                    true
                }
            },
        }
    }

    /// The bytes of each row's key in `keys` (see `key_bytes`).
    pub fn encode(&self, keys: &[ArrayRef], rows: usize) -> Result<Vec<Vec<u8>>> {
        Ok(match &self.lookup {
            Lookup::Single(_) => vec![Vec::new(); rows],
            Lookup::Integer(..) => {
                let column = cast(&keys[0], &ArrowType::Int64)?;
                column
                    .as_primitive::<Int64Type>()
                    .iter()
                    .map(|value| value.map_or_else(Vec::new, |v| integer_key_bytes(v).to_vec()))
                    .collect()
            }
            Lookup::Rows(converter, _) => converter
                .convert_columns(keys)?
                .iter()
                .map(|row| row.as_ref().to_vec())
                .collect(),
        })
    }

    /// The key columns of keys given by their bytes (see `key_bytes`), of the key types.
    pub fn arrays_of_bytes(
        &self,
        keys: &[&[u8]],
        key_types: &[ArrowType],
    ) -> Result<Vec<ArrayRef>> {
        match &self.lookup {
            Lookup::Single(_) => Ok(Vec::new()),
            Lookup::Integer(_) => {
                let values = keys
                    .iter()
                    .map(|bytes| match bytes {
                        [] => Ok(None),
                        bytes => {
                            let bytes = (*bytes).try_into().map_err(|_| {
                                DataFusionError::Internal(format!(
                                    "an integer key of {} bytes",
                                    bytes.len()
                                ))
                            })?;
                            Ok(Some(integer_from_key_bytes(bytes)))
                        }
                    })
                    .collect::<Result<Int64Array>>()?;
                Ok(vec![cast(&values, &key_types[0])?])
            }
            Lookup::Rows(converter, _) => {
                let parser = converter.parser();
                let rows: Vec<_> = keys.iter().map(|bytes| parser.parse(bytes)).collect();
                Ok(converter.convert_rows(rows)?)
            }
        }
    }

    /// The slot of the key in use whose bytes are `bytes`, if it has one.
    pub fn find_bytes(&self, bytes: &[u8]) -> Option<u32> {
        match &self.lookup {
            Lookup::Single(held) => held.then_some(0),
            Lookup::Integer(table) => match bytes {
                [] => table.find(None),
                bytes => table.find(Some(integer_from_key_bytes(bytes.try_into().ok()?))),
            },
            Lookup::Rows(_, table) => table.find(bytes),
        }
    }

    /// The slot of the key whose bytes are `bytes` (see `key_bytes`), assigned if new.
    pub fn slot_of_bytes(&mut self, bytes: &[u8]) -> Result<u32> {
        let allocator = &mut self.slots;
        Ok(match &mut self.lookup {
            Lookup::Single(held) => {
                if !*held {
                    *held = true;
                    if let Some(taken) = &mut allocator.taken {
                        taken.push(0);
                    }
                }
                0
            }
            Lookup::Integer(table) => match bytes {
                [] => table.null_slot(allocator),
                bytes => {
                    let value = integer_from_key_bytes(bytes.try_into().map_err(|_| {
                        DataFusionError::Execution(format!(
                            "a saved integer key has {} bytes, not 8",
                            bytes.len()
                        ))
                    })?);
                    table.slot(value, allocator)
                }
            },
            Lookup::Rows(_, table) => table.slot(bytes, || Box::from(bytes), allocator),
        })
    }
}

/// An integer key's bytes, ordered as the integers are (big-endian, sign bit flipped): keys
/// that come close in order lie close in the disk store, so reading them back in order hits
/// blocks already read.
fn integer_key_bytes(value: i64) -> [u8; 8] {
    ((value as u64) ^ (1 << 63)).to_be_bytes()
}

fn integer_from_key_bytes(bytes: [u8; 8]) -> i64 {
    (u64::from_be_bytes(bytes) ^ (1 << 63)) as i64
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Int32Array, Int64Array, StringArray};

    use super::*;

    #[test]
    fn integer_key_bytes_sort_as_the_integers_and_read_back() {
        let mut values = [i64::MAX, 300, 1, 0, -1, -300, i64::MIN, 255, 256];
        let mut by_bytes = values;
        by_bytes.sort_by_key(|&v| integer_key_bytes(v));
        values.sort();
        assert_eq!(by_bytes, values);
        for v in values {
            assert_eq!(integer_from_key_bytes(integer_key_bytes(v)), v);
        }
    }

    fn slots(table: &mut KeyTable, keys: &[ArrayRef], rows: usize) -> Vec<u32> {
        let mut out = Vec::new();
        table.slots(keys, rows, &mut out).unwrap();
        out
    }

    #[test]
    fn equal_keys_share_a_slot_and_freed_slots_are_reused() {
        let mut table = KeyTable::new(&[ArrowType::Utf8, ArrowType::Int64]).unwrap();
        let a: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "a", "a"]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![1, 1, 1, 2]));
        assert_eq!(slots(&mut table, &[a, b], 4), [0, 1, 0, 2]);
        table.release(1);
        assert_eq!(table.len(), 2);
        let a: ArrayRef = Arc::new(StringArray::from(vec!["c"]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![9]));
        assert_eq!(slots(&mut table, &[a, b], 1), [1]);
    }

    #[test]
    fn integer_keys_keep_null_apart_from_every_value() {
        let mut table = KeyTable::new(&[ArrowType::Int32]).unwrap();
        let keys: ArrayRef = Arc::new(Int32Array::from(vec![
            Some(0),
            None,
            Some(7),
            None,
            Some(0),
        ]));
        assert_eq!(slots(&mut table, &[keys], 5), [0, 1, 2, 1, 0]);
        table.release(0);
        table.release(0);
        assert_eq!(table.len(), 2);
        let keys: ArrayRef = Arc::new(Int32Array::from(vec![8, 7]));
        assert_eq!(slots(&mut table, &[keys], 2), [0, 2]);
    }
}
