//! Key slots: each PARTITION BY key a processor holds state for gets a small number, which
//! indexes the function's state stores. Keys are compared in Arrow's row format, so any
//! key types work; slots of keys whose state became empty are reused.

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType as ArrowType;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{HashMap, Result};

pub struct KeyTable {
    /// `None` without PARTITION BY: every row has slot 0.
    converter: Option<RowConverter>,
    slots: HashMap<Box<[u8]>, u32>,
    /// The key of each slot in use.
    keys: Vec<Option<Box<[u8]>>>,
    free: Vec<u32>,
}

impl KeyTable {
    pub fn new(key_types: &[ArrowType]) -> Result<Self> {
        let converter = if key_types.is_empty() {
            None
        } else {
            Some(RowConverter::new(
                key_types.iter().cloned().map(SortField::new).collect(),
            )?)
        };
        Ok(KeyTable {
            converter,
            slots: HashMap::default(),
            keys: Vec::new(),
            free: Vec::new(),
        })
    }

    /// The slot of each row's key, assigning slots to new keys.
    pub fn slots(&mut self, keys: &[ArrayRef], rows: usize) -> Result<Vec<u32>> {
        let Some(converter) = &self.converter else {
            return Ok(vec![0; rows]);
        };
        let converted = converter.convert_columns(keys)?;
        let mut slots = Vec::with_capacity(rows);
        for row in converted.iter() {
            let bytes = row.as_ref();
            let slot = match self.slots.get(bytes) {
                Some(&slot) => slot,
                None => {
                    let key: Box<[u8]> = bytes.into();
                    let slot = match self.free.pop() {
                        Some(slot) => {
                            self.keys[slot as usize] = Some(key.clone());
                            slot
                        }
                        None => {
                            self.keys.push(Some(key.clone()));
                            (self.keys.len() - 1) as u32
                        }
                    };
                    self.slots.insert(key, slot);
                    slot
                }
            };
            slots.push(slot);
        }
        Ok(slots)
    }

    /// Frees `slot` for another key (its state is empty).
    pub fn release(&mut self, slot: u32) {
        if self.converter.is_none() {
            return;
        }
        if let Some(key) = self.keys.get_mut(slot as usize).and_then(Option::take) {
            self.slots.remove(&key);
            self.free.push(slot);
        }
    }

    /// Keys holding a slot.
    pub fn len(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Int64Array, StringArray};

    use super::*;

    #[test]
    fn equal_keys_share_a_slot_and_freed_slots_are_reused() {
        let mut table = KeyTable::new(&[ArrowType::Utf8, ArrowType::Int64]).unwrap();
        let a: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "a", "a"]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![1, 1, 1, 2]));
        assert_eq!(table.slots(&[a, b], 4).unwrap(), [0, 1, 0, 2]);
        table.release(1);
        assert_eq!(table.len(), 2);
        let a: ArrayRef = Arc::new(StringArray::from(vec!["c"]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![9]));
        assert_eq!(table.slots(&[a, b], 1).unwrap(), [1]);
    }
}
