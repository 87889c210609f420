//! Key slots: each PARTITION BY key a processor holds state for gets a small number, which
//! indexes the function's state stores; slots of keys whose state became empty are reused.
//!
//! One integer key column (the common case) is looked up by value; any other keys are
//! compared in Arrow's row format. Slots are the table's own business: outside it — in
//! snapshots — a key is its bytes (`key_bytes`), which mean the same in every run.

use std::hash::Hash;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType as ArrowType, Int64Type};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{HashMap, Result};

pub struct KeyTable {
    lookup: Lookup,
    free: Vec<u32>,
    /// Slots handed out so far (in use or free).
    assigned: u32,
}

enum Lookup {
    /// No PARTITION BY: every row has slot 0.
    Single,
    /// One integer column; NULL has a slot of its own.
    Integer(Slots<i64>, Option<u32>),
    /// Anything else, in Arrow's row format.
    Rows(RowConverter, Slots<Box<[u8]>>),
}

/// Keys to slots, and back (to free a slot).
struct Slots<K> {
    slots: HashMap<K, u32>,
    keys: Vec<Option<K>>,
}

impl<K: Hash + Eq + Clone> Slots<K> {
    fn new() -> Self {
        Slots {
            slots: HashMap::default(),
            keys: Vec::new(),
        }
    }

    fn release(&mut self, slot: u32) -> bool {
        match self.keys.get_mut(slot as usize).and_then(Option::take) {
            Some(key) => {
                self.slots.remove(&key);
                true
            }
            None => false,
        }
    }
}

/// The slot of `key`, assigning a free or new one to a key not seen before.
macro_rules! slot_of {
    ($slots:expr, $free:expr, $assigned:expr, $key:expr, $owned:expr) => {
        match $slots.slots.get($key) {
            Some(&slot) => slot,
            None => $slots.assign($owned, $free, &mut $assigned),
        }
    };
}

impl<K: Hash + Eq + Clone> Slots<K> {
    /// A slot for a key seen for the first time (kept out of the lookup loops).
    #[cold]
    #[inline(never)]
    fn assign(&mut self, key: K, free: &mut Vec<u32>, assigned: &mut u32) -> u32 {
        let slot = free.pop().unwrap_or_else(|| {
            *assigned += 1;
            *assigned - 1
        });
        if self.keys.len() <= slot as usize {
            self.keys.resize(slot as usize + 1, None);
        }
        self.keys[slot as usize] = Some(key.clone());
        self.slots.insert(key, slot);
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
            [] => Lookup::Single,
            [single] if is_integer(single) => Lookup::Integer(Slots::new(), None),
            _ => Lookup::Rows(
                RowConverter::new(key_types.iter().cloned().map(SortField::new).collect())?,
                Slots::new(),
            ),
        };
        Ok(KeyTable {
            lookup,
            free: Vec::new(),
            assigned: 0,
        })
    }

    /// The slot of each row's key into `out` (cleared first), assigning slots to new keys.
    pub fn slots(&mut self, keys: &[ArrayRef], rows: usize, out: &mut Vec<u32>) -> Result<()> {
        out.clear();
        out.reserve(rows);
        let (free, assigned) = (&mut self.free, &mut self.assigned);
        match &mut self.lookup {
            Lookup::Single => out.resize(rows, 0),
            Lookup::Integer(slots, null_slot) => {
                let column = cast(&keys[0], &ArrowType::Int64)?;
                let values = column.as_primitive::<Int64Type>();
                if values.null_count() == 0 {
                    out.extend(
                        values
                            .values()
                            .iter()
                            .map(|value| slot_of!(slots, free, *assigned, value, *value)),
                    );
                } else {
                    for value in values.iter() {
                        out.push(match value {
                            Some(value) => slot_of!(slots, free, *assigned, &value, value),
                            None => *null_slot.get_or_insert_with(|| {
                                free.pop().unwrap_or_else(|| {
                                    *assigned += 1;
                                    *assigned - 1
                                })
                            }),
                        });
                    }
                }
            }
            Lookup::Rows(converter, slots) => {
                let converted = converter.convert_columns(keys)?;
                for row in converted.iter() {
                    let bytes = row.as_ref();
                    out.push(slot_of!(
                        slots,
                        free,
                        *assigned,
                        bytes,
                        Box::<[u8]>::from(bytes)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Frees `slot` for another key (its state is empty).
    pub fn release(&mut self, slot: u32) {
        let released = match &mut self.lookup {
            Lookup::Single => false,
            Lookup::Integer(slots, null_slot) => {
                if *null_slot == Some(slot) {
                    *null_slot = None;
                    true
                } else {
                    slots.release(slot)
                }
            }
            Lookup::Rows(_, slots) => slots.release(slot),
        };
        if released {
            self.free.push(slot);
        }
    }

    /// The key columns of `slots` (which must be in use), of the key types.
    pub fn key_arrays(&self, slots: &[u32], key_types: &[ArrowType]) -> Result<Vec<ArrayRef>> {
        match &self.lookup {
            Lookup::Single => Ok(Vec::new()),
            Lookup::Integer(keys, null_slot) => {
                let values: Int64Array = slots
                    .iter()
                    .map(|slot| {
                        if *null_slot == Some(*slot) {
                            None
                        } else {
                            keys.keys.get(*slot as usize).copied().flatten()
                        }
                    })
                    .collect();
                Ok(vec![cast(&values, &key_types[0])?])
            }
            Lookup::Rows(converter, keys) => {
                let parser = converter.parser();
                let rows: Vec<_> = slots
                    .iter()
                    .map(|slot| {
                        let bytes = keys
                            .keys
                            .get(*slot as usize)
                            .and_then(Option::as_ref)
                            .expect("a slot with timers keeps its key");
                        parser.parse(bytes)
                    })
                    .collect();
                Ok(converter.convert_rows(rows)?)
            }
        }
    }
}

/// Keys by their bytes, for snapshots and lookups from outside the processor's calls (see
/// `streaming/state/`).
#[cfg_attr(not(test), allow(dead_code))]
impl KeyTable {
    /// The bytes of the key in `slot` (which must be in use): the integer's 8 little-endian
    /// bytes (none for NULL), the row-format bytes of other keys, nothing without keys.
    pub fn key_bytes(&self, slot: u32) -> Option<Vec<u8>> {
        match &self.lookup {
            Lookup::Single => Some(Vec::new()),
            Lookup::Integer(slots, null_slot) => {
                if *null_slot == Some(slot) {
                    return Some(Vec::new());
                }
                let value = slots.keys.get(slot as usize).copied().flatten()?;
                Some(value.to_le_bytes().to_vec())
            }
            Lookup::Rows(_, slots) => slots
                .keys
                .get(slot as usize)
                .and_then(Option::as_ref)
                .map(|bytes| bytes.to_vec()),
        }
    }

    /// The bytes of each row's key in `keys` (see `key_bytes`).
    pub fn encode(&self, keys: &[ArrayRef], rows: usize) -> Result<Vec<Vec<u8>>> {
        Ok(match &self.lookup {
            Lookup::Single => vec![Vec::new(); rows],
            Lookup::Integer(..) => {
                let column = cast(&keys[0], &ArrowType::Int64)?;
                column
                    .as_primitive::<Int64Type>()
                    .iter()
                    .map(|value| value.map_or_else(Vec::new, |v| v.to_le_bytes().to_vec()))
                    .collect()
            }
            Lookup::Rows(converter, _) => converter
                .convert_columns(keys)?
                .iter()
                .map(|row| row.as_ref().to_vec())
                .collect(),
        })
    }

    /// The slot of the key in use whose bytes are `bytes`, if it has one.
    pub fn find_bytes(&self, bytes: &[u8]) -> Option<u32> {
        match &self.lookup {
            Lookup::Single => (self.assigned > 0).then_some(0),
            Lookup::Integer(slots, null_slot) => match bytes {
                [] => *null_slot,
                bytes => {
                    let value = i64::from_le_bytes(bytes.try_into().ok()?);
                    slots.slots.get(&value).copied()
                }
            },
            Lookup::Rows(_, slots) => slots.slots.get(bytes).copied(),
        }
    }

    /// The slot of the key whose bytes are `bytes` (see `key_bytes`), assigned if new.
    pub fn slot_of_bytes(&mut self, bytes: &[u8]) -> Result<u32> {
        let (free, assigned) = (&mut self.free, &mut self.assigned);
        Ok(match &mut self.lookup {
            Lookup::Single => 0,
            Lookup::Integer(slots, null_slot) => match bytes {
                [] => *null_slot.get_or_insert_with(|| {
                    free.pop().unwrap_or_else(|| {
                        *assigned += 1;
                        *assigned - 1
                    })
                }),
                bytes => {
                    let value = i64::from_le_bytes(bytes.try_into().map_err(|_| {
                        datafusion::common::DataFusionError::Execution(format!(
                            "a saved integer key has {} bytes, not 8",
                            bytes.len()
                        ))
                    })?);
                    slot_of!(slots, free, *assigned, &value, value)
                }
            },
            Lookup::Rows(_, slots) => {
                slot_of!(slots, free, *assigned, bytes, Box::<[u8]>::from(bytes))
            }
        })
    }
}

impl KeyTable {
    /// Keys holding a slot.
    pub fn len(&self) -> usize {
        match &self.lookup {
            Lookup::Single => usize::from(self.assigned > 0),
            Lookup::Integer(slots, null_slot) => {
                slots.slots.len() + usize::from(null_slot.is_some())
            }
            Lookup::Rows(_, slots) => slots.slots.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Int32Array, Int64Array, StringArray};

    use super::*;

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
