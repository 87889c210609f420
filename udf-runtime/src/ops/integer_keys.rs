//! A key table (DataFusion's `GroupValues`) for one integer key column whose keys are
//! small and non-negative — ids, codes, `id % n`, the common GROUP BY of streaming
//! aggregates: each key's group sits in a plain vector at the key's index, one load
//! instead of a hash and a probe. A window aggregate inserts every key of a window anew
//! (each window has a table of its own, emptied when it fires), and an insert into a hash
//! table is a miss at a random place; here keys near one another share cache lines.
//!
//! The vector grows to cover a key only while it stays within a few words per group and row
//! to come (as the keyed state's integer slots, `streaming/keys/integer.rs`); a negative key
//! or one beyond that hands the table over to DataFusion's for good, its groups numbered as
//! they were.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use datafusion::arrow::buffer::{NullBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Int8Type, Int16Type, Int32Type, Int64Type, SchemaRef, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::common::{Result, internal_err};
use datafusion::logical_expr::EmitTo;
use datafusion::physical_plan::aggregates::group_values::{GroupValues, new_group_values};
use datafusion::physical_plan::aggregates::order::GroupOrdering;

/// The vector may always cover this many keys.
const DENSE_FLOOR: usize = 1024;
/// Otherwise it covers at most this many keys per group and row to come (16 bytes a key,
/// less than a hash table takes for one: the disk backend's budget counts it).
const DENSE_PER_KEY: usize = 4;
/// It never covers more keys than this (16 MiB).
const DENSE_LIMIT: usize = 1 << 22;

/// A key table for the key columns of `schema`: the dense one for one integer column,
/// DataFusion's otherwise.
pub(crate) fn key_table(schema: SchemaRef) -> Result<Box<dyn GroupValues>> {
    if let [field] = &schema.fields()[..] {
        let data_type = field.data_type().clone();
        let dense: Option<Box<dyn GroupValues>> = match data_type {
            DataType::Int8 => Some(Box::new(DenseKeys::<Int8Type>::new(schema.clone()))),
            DataType::Int16 => Some(Box::new(DenseKeys::<Int16Type>::new(schema.clone()))),
            DataType::Int32 => Some(Box::new(DenseKeys::<Int32Type>::new(schema.clone()))),
            DataType::Int64 => Some(Box::new(DenseKeys::<Int64Type>::new(schema.clone()))),
            DataType::UInt8 => Some(Box::new(DenseKeys::<UInt8Type>::new(schema.clone()))),
            DataType::UInt16 => Some(Box::new(DenseKeys::<UInt16Type>::new(schema.clone()))),
            DataType::UInt32 => Some(Box::new(DenseKeys::<UInt32Type>::new(schema.clone()))),
            DataType::UInt64 => Some(Box::new(DenseKeys::<UInt64Type>::new(schema.clone()))),
            _ => None,
        };
        if let Some(dense) = dense {
            return Ok(dense);
        }
    }
    new_group_values(schema, &GroupOrdering::None)
}

/// An integer key as an index, when it is one.
trait IndexKey: Copy + Default + Send + Sync + 'static {
    fn index(self) -> Option<usize>;
}

macro_rules! index_key {
    ($($native:ty),*) => {$(
        impl IndexKey for $native {
            #[inline]
            fn index(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
        }
    )*};
}

index_key!(i8, i16, i32, i64, u8, u16, u32, u64);

struct DenseKeys<T: ArrowPrimitiveType> {
    schema: SchemaRef,
    /// Once a batch did not fit the vector: DataFusion's table, which has every group.
    hashed: Option<Box<dyn GroupValues>>,
    /// Group + 1 of key `k` at index `k` (0: no group).
    groups: Vec<u32>,
    /// The key of each group, in group order (the NULL group's is a placeholder).
    values: Vec<T::Native>,
    null_group: Option<usize>,
}

impl<T: ArrowPrimitiveType> DenseKeys<T>
where
    T::Native: IndexKey,
{
    fn new(schema: SchemaRef) -> Self {
        DenseKeys {
            schema,
            hashed: None,
            groups: Vec::new(),
            values: Vec::new(),
            null_group: None,
        }
    }

    /// Grows the vector to cover key `index` if it can stay within its bounds with `rows`
    /// more rows to come (at least doubling it, so growing costs a constant a key); whether
    /// it does.
    #[cold]
    fn grow_to_cover(&mut self, index: usize, rows: usize) -> bool {
        let bound = DENSE_LIMIT.min(DENSE_FLOOR.max(DENSE_PER_KEY * (self.values.len() + rows)));
        if index >= bound {
            return false;
        }
        let len = (index + 1).max(2 * self.groups.len()).min(bound);
        self.groups.resize(len, 0);
        true
    }

    fn null_group(&mut self) -> usize {
        *self.null_group.get_or_insert_with(|| {
            self.values.push(T::Native::default());
            self.values.len() - 1
        })
    }

    /// Hands the groups over to DataFusion's table, numbered as they are.
    fn hand_over(&mut self) -> Result<&mut Box<dyn GroupValues>> {
        let mut hashed = new_group_values(self.schema.clone(), &GroupOrdering::None)?;
        let keys = self.take_keys(self.values.len());
        let mut numbered = Vec::with_capacity(keys.len());
        hashed.intern(&[keys], &mut numbered)?;
        if numbered.iter().enumerate().any(|(at, &group)| at != group) {
            return internal_err!("the integer keys were numbered anew when handed over");
        }
        self.groups = Vec::new();
        self.values = Vec::new();
        Ok(self.hashed.insert(hashed))
    }

    /// The keys of the first `count` groups, which are forgotten (the rest numbered from 0).
    fn take_keys(&mut self, count: usize) -> ArrayRef {
        for &key in &self.values {
            if let Some(group) = key.index().and_then(|k| self.groups.get_mut(k)) {
                *group = 0;
            }
        }
        let emitted = if count == self.values.len() {
            // Room for as many keys again: a window that fires is followed by one alike.
            std::mem::replace(&mut self.values, Vec::with_capacity(count))
        } else {
            let rest = self.values.split_off(count);
            std::mem::replace(&mut self.values, rest)
        };
        let nulls = match self.null_group {
            Some(group) if group < count => {
                self.null_group = None;
                Some(NullBuffer::from_iter((0..count).map(|g| g != group)))
            }
            Some(group) => {
                self.null_group = Some(group - count);
                None
            }
            None => None,
        };
        for (group, &key) in self.values.iter().enumerate() {
            if Some(group) != self.null_group
                && let Some(place) = key.index().and_then(|k| self.groups.get_mut(k))
            {
                *place = group as u32 + 1;
            }
        }
        let keys = PrimitiveArray::<T>::new(ScalarBuffer::from(emitted), nulls)
            .with_data_type(self.schema.field(0).data_type().clone());
        Arc::new(keys)
    }

    /// The group of key `index` (covered by the vector), a new one when it has none.
    #[inline]
    fn group(&mut self, key: T::Native, index: usize) -> usize {
        let place = &mut self.groups[index];
        if *place == 0 {
            self.values.push(key);
            // The vector covers fewer keys than `u32` counts.
            *place = self.values.len() as u32;
        }
        *place as usize - 1
    }
}

impl<T: ArrowPrimitiveType> GroupValues for DenseKeys<T>
where
    T::Native: IndexKey,
{
    fn intern(&mut self, cols: &[ArrayRef], groups: &mut Vec<usize>) -> Result<()> {
        if let Some(hashed) = &mut self.hashed {
            return hashed.intern(cols, groups);
        }
        let [column] = cols else {
            return internal_err!(
                "an integer key table takes one key column, not {}",
                cols.len()
            );
        };
        let keys = column.as_primitive::<T>();
        let nulls = keys.nulls().filter(|nulls| nulls.null_count() > 0);
        let values = keys.values();
        groups.clear();
        groups.reserve(values.len());
        let mut row = 0;
        while row < values.len() {
            if nulls.is_some_and(|nulls| nulls.is_null(row)) {
                groups.push(self.null_group());
                row += 1;
                continue;
            }
            let key = values[row];
            match key.index() {
                Some(index) if index < self.groups.len() => groups.push(self.group(key, index)),
                index => {
                    let rows = values.len() - row;
                    if index.is_some_and(|index| self.grow_to_cover(index, rows)) {
                        continue;
                    }
                    // Negative, or too far for the vector: DataFusion's table takes the
                    // groups so far and the rest of the batch.
                    let mut rest = Vec::with_capacity(rows);
                    self.hand_over()?
                        .intern(&[column.slice(row, rows)], &mut rest)?;
                    groups.extend(rest);
                    return Ok(());
                }
            }
            row += 1;
        }
        Ok(())
    }

    fn size(&self) -> usize {
        match &self.hashed {
            Some(hashed) => hashed.size(),
            None => {
                self.groups.capacity() * size_of::<u32>()
                    + self.values.capacity() * size_of::<T::Native>()
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn len(&self) -> usize {
        match &self.hashed {
            Some(hashed) => hashed.len(),
            None => self.values.len(),
        }
    }

    fn emit(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        if let Some(hashed) = &mut self.hashed {
            return hashed.emit(emit_to);
        }
        let count = match emit_to {
            EmitTo::All => self.values.len(),
            EmitTo::First(n) => n.min(self.values.len()),
        };
        Ok(vec![self.take_keys(count)])
    }

    fn clear_shrink(&mut self, num_rows: usize) {
        if let Some(hashed) = &mut self.hashed {
            return hashed.clear_shrink(num_rows);
        }
        self.take_keys(self.values.len());
        self.values.shrink_to(num_rows);
        self.groups
            .truncate(DENSE_FLOOR.max(DENSE_PER_KEY * num_rows).min(DENSE_LIMIT));
        self.groups.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Int64Array, UInt8Array};
    use datafusion::arrow::datatypes::{Field, Schema};

    use super::*;

    fn schema(data_type: DataType) -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("k", data_type, true)]))
    }

    /// Keys below `range` with repeats and NULLs, from a fixed seed; `wide` adds a few
    /// negative and huge ones.
    fn keys(len: usize, range: u64, seed: u64, wide: bool) -> Int64Array {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                match state % 211 {
                    0 => None,
                    1 if wide => Some(i64::MIN + (state % 3) as i64),
                    2 if wide => Some((state % range) as i64 * (1 << 40)),
                    _ => Some((state % range) as i64),
                }
            })
            .collect()
    }

    /// Ours and DataFusion's tables number the same keys the same, batch after batch, and
    /// hand out the same keys, through emits of some or all and a clear — dense throughout,
    /// or handed over to DataFusion's table midway.
    #[test]
    fn groups_and_keys_are_those_of_datafusion_s_table() {
        for wide_from in [usize::MAX, 2] {
            let schema = schema(DataType::Int64);
            let mut ours = key_table(schema.clone()).unwrap();
            let mut theirs = new_group_values(schema, &GroupOrdering::None).unwrap();
            let (mut mine, mut expected) = (Vec::new(), Vec::new());
            for (round, range) in [10u64, 1_000, 30_000, 50, 3_000].into_iter().enumerate() {
                for batch in 0..4 {
                    let seed = (round * 10 + batch + 1) as u64;
                    let column: ArrayRef = Arc::new(keys(2_000, range, seed, round >= wide_from));
                    ours.intern(std::slice::from_ref(&column), &mut mine)
                        .unwrap();
                    theirs
                        .intern(std::slice::from_ref(&column), &mut expected)
                        .unwrap();
                    assert_eq!(mine, expected, "round {round}, batch {batch}");
                    assert_eq!(ours.len(), theirs.len());
                }
                match round % 3 {
                    0 => {
                        let n = ours.len() / 3;
                        let a = ours.emit(EmitTo::First(n)).unwrap();
                        let b = theirs.emit(EmitTo::First(n)).unwrap();
                        assert_eq!(a[0].to_data(), b[0].to_data(), "the first {n} keys");
                    }
                    1 => {
                        let a = ours.emit(EmitTo::All).unwrap();
                        let b = theirs.emit(EmitTo::All).unwrap();
                        assert_eq!(a[0].to_data(), b[0].to_data(), "every key");
                        assert!(ours.is_empty());
                    }
                    _ => {
                        let keys = ours.len();
                        ours.emit(EmitTo::All).unwrap();
                        theirs.emit(EmitTo::All).unwrap();
                        ours.clear_shrink(keys);
                        theirs.clear_shrink(keys);
                    }
                }
                assert_eq!(ours.len(), theirs.len());
            }
        }
    }

    #[test]
    fn a_key_beyond_the_vector_hands_the_groups_over_numbered_as_they_were() {
        let mut table = key_table(schema(DataType::Int64)).unwrap();
        let mut groups = Vec::new();
        let small: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), None, Some(7)]));
        table.intern(&[small], &mut groups).unwrap();
        assert_eq!(groups, [0, 1, 2]);
        // Far beyond what three groups may cover, and negative.
        let wide: ArrayRef = Arc::new(Int64Array::from(vec![
            Some(7),
            Some(1 << 40),
            Some(-1),
            None,
        ]));
        table.intern(&[wide], &mut groups).unwrap();
        assert_eq!(groups, [2, 3, 4, 1]);
        let keys = table.emit(EmitTo::All).unwrap();
        let keys = keys[0].as_primitive::<Int64Type>();
        assert_eq!(
            keys.iter().collect::<Vec<_>>(),
            [Some(3), None, Some(7), Some(1 << 40), Some(-1)]
        );
    }

    #[test]
    fn the_vector_covers_a_few_keys_per_group_and_row_to_come() {
        let mut table = DenseKeys::<Int64Type>::new(schema(DataType::Int64));
        let mut groups = Vec::new();
        // Below the floor, any order.
        let first: ArrayRef = Arc::new(Int64Array::from_iter_values((0..1_000).rev()));
        table.intern(&[first], &mut groups).unwrap();
        assert!(table.hashed.is_none());
        // 1,000 groups and a row to come: keys below 4 × 1,001.
        let last_covered = (DENSE_PER_KEY * 1_001 - 1) as i64;
        let fits: ArrayRef = Arc::new(Int64Array::from(vec![last_covered]));
        table.intern(&[fits], &mut groups).unwrap();
        assert!(table.hashed.is_none(), "key {last_covered} is covered");
        assert_eq!(groups, [1_000]);
        let beyond: ArrayRef = Arc::new(Int64Array::from(vec![(DENSE_PER_KEY * 1_002) as i64]));
        table.intern(&[beyond], &mut groups).unwrap();
        assert!(
            table.hashed.is_some(),
            "a key past the bound goes to DataFusion's table"
        );
        assert_eq!(groups, [1_001]);
    }

    #[test]
    fn narrow_and_unsigned_keys_keep_their_type() {
        let mut table = key_table(schema(DataType::UInt8)).unwrap();
        let column: ArrayRef = Arc::new(UInt8Array::from(vec![
            Some(255),
            None,
            Some(0),
            Some(255),
            None,
        ]));
        let mut groups = Vec::new();
        table.intern(&[column], &mut groups).unwrap();
        assert_eq!(groups, [0, 1, 2, 0, 1]);
        let keys = table.emit(EmitTo::All).unwrap();
        assert_eq!(keys[0].data_type(), &DataType::UInt8);
        let keys = keys[0].as_primitive::<UInt8Type>();
        assert_eq!(keys.iter().collect::<Vec<_>>(), [Some(255), None, Some(0)]);
    }
}
