//! Collections: `Vec<T>` (ARRAY) and `HashMap<K, V>` / `BTreeMap<K, V>` (MAP).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::Arc;

use arrow::array::NullBufferBuilder;
use arrow::array::{Array, ArrayRef, LargeListArray, ListArray, MapArray, StructArray};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType as ArrowType, FieldRef};

use super::{
    ArgReader, ArgValue, Nulls, ResultValue, SqlType, ValueBuilder, unexpected_array,
    unexpected_type,
};
use crate::Error;
use crate::types::{DataType, RootSet, TypeKind, TypeRoot};

enum Offsets<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Offsets<'_> {
    #[inline]
    fn range(&self, index: usize) -> std::ops::Range<usize> {
        match self {
            Offsets::I32(o) => o[index] as usize..o[index + 1] as usize,
            Offsets::I64(o) => o[index] as usize..o[index + 1] as usize,
        }
    }
}

/// Reads the element at `index` of a child column, rejecting NULL where `T` has no room for it.
#[inline]
fn element<'a, T: ArgValue<'a>>(
    reader: &T::Reader,
    nulls: &Nulls<'a>,
    index: usize,
    what: &str,
) -> Result<T, Error> {
    if !T::NULLABLE && nulls.is_null(index) {
        return Err(Error::msg(format!(
            "{what} holds NULL, which `{}` cannot represent; use `Option<{}>`",
            std::any::type_name::<T>(),
            std::any::type_name::<T>()
        )));
    }
    reader.get(index)
}

pub struct ListReader<'a, T: ArgValue<'a>> {
    offsets: Offsets<'a>,
    elements: T::Reader,
    element_nulls: Nulls<'a>,
}

impl<T: SqlType> SqlType for Vec<T> {
    const ROOTS: RootSet = RootSet::of(TypeRoot::Array);

    fn data_type() -> DataType {
        DataType::array(T::data_type()).not_null()
    }
}

impl<'a, T: ArgValue<'a>> ArgValue<'a> for Vec<T> {
    type Reader = ListReader<'a, T>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        let any = array.as_any();
        let (offsets, values) = if let Some(list) = any.downcast_ref::<ListArray>() {
            (Offsets::I32(list.value_offsets()), list.values())
        } else if let Some(list) = any.downcast_ref::<LargeListArray>() {
            (Offsets::I64(list.value_offsets()), list.values())
        } else {
            return Err(unexpected_array::<Vec<T>>(array));
        };
        Ok(ListReader {
            offsets,
            elements: T::reader(values.as_ref())?,
            element_nulls: Nulls::of(values.as_ref()),
        })
    }
}

impl<'a, T: ArgValue<'a>> ArgReader<'a> for ListReader<'a, T> {
    type Value = Vec<T>;

    fn get(&self, index: usize) -> Result<Vec<T>, Error> {
        self.offsets
            .range(index)
            .map(|i| element::<T>(&self.elements, &self.element_nulls, i, "an ARRAY argument"))
            .collect()
    }
}

/// Builds a `List` array: offsets and validity here, elements in the child builder.
pub struct ListBuilder<B> {
    elements: B,
    field: FieldRef,
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
}

impl<T: ResultValue> ResultValue for Vec<T> {
    type Builder = ListBuilder<T::Builder>;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        let TypeKind::Array(element) = &data_type.kind else {
            return Err(unexpected_type::<Vec<T>>(data_type));
        };
        let mut offsets = Vec::with_capacity(capacity + 1);
        offsets.push(0);
        Ok(ListBuilder {
            elements: T::builder(element, capacity)?,
            field: Arc::new(element.to_arrow_field("item")),
            offsets,
            nulls: NullBufferBuilder::new(capacity),
        })
    }
}

fn next_offset(offsets: &[i32], added: usize) -> Result<i32, Error> {
    i32::try_from(added)
        .ok()
        .and_then(|n| offsets.last().expect("starts with 0").checked_add(n))
        .ok_or_else(|| Error::msg("a result batch holds more than 2^31 collection elements"))
}

impl<T, B: ValueBuilder<T>> ValueBuilder<Vec<T>> for ListBuilder<B> {
    fn append(&mut self, value: Vec<T>) -> Result<(), Error> {
        let offset = next_offset(&self.offsets, value.len())?;
        for item in value {
            self.elements.append(item)?;
        }
        self.offsets.push(offset);
        self.nulls.append_non_null();
        Ok(())
    }

    fn append_null(&mut self) {
        let last = *self.offsets.last().expect("starts with 0");
        self.offsets.push(last);
        self.nulls.append_null();
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        Ok(Arc::new(ListArray::try_new(
            self.field.clone(),
            OffsetBuffer::new(offsets.into()),
            self.elements.finish()?,
            self.nulls.finish(),
        )?))
    }
}

pub struct MapReader<'a, K: ArgValue<'a>, V: ArgValue<'a>> {
    offsets: &'a [i32],
    keys: K::Reader,
    values: V::Reader,
    key_nulls: Nulls<'a>,
    value_nulls: Nulls<'a>,
}

impl<'a, K: ArgValue<'a>, V: ArgValue<'a>> MapReader<'a, K, V> {
    fn new<M>(array: &'a dyn Array) -> Result<Self, Error> {
        let map = array
            .as_any()
            .downcast_ref::<MapArray>()
            .ok_or_else(|| unexpected_array::<M>(array))?;
        Ok(MapReader {
            offsets: map.value_offsets(),
            keys: K::reader(map.keys().as_ref())?,
            values: V::reader(map.values().as_ref())?,
            key_nulls: Nulls::of(map.keys().as_ref()),
            value_nulls: Nulls::of(map.values().as_ref()),
        })
    }

    fn entries(&self, index: usize) -> impl Iterator<Item = Result<(K, V), Error>> + '_ {
        let range = self.offsets[index] as usize..self.offsets[index + 1] as usize;
        range.map(|i| {
            Ok((
                element::<K>(&self.keys, &self.key_nulls, i, "a MAP key")?,
                element::<V>(&self.values, &self.value_nulls, i, "a MAP value")?,
            ))
        })
    }
}

/// Builds a `Map` array from key and value child builders.
pub struct MapBuilder<KB, VB> {
    keys: KB,
    values: VB,
    entries: FieldRef,
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
}

fn map_builder<K: ResultValue, V: ResultValue, M>(
    data_type: &DataType,
    capacity: usize,
) -> Result<MapBuilder<K::Builder, V::Builder>, Error> {
    let (key, value) = match &data_type.kind {
        TypeKind::Map { key, value } => (key.as_ref().clone(), value.as_ref().clone()),
        TypeKind::Multiset(element) => (element.as_ref().clone(), DataType::int().not_null()),
        _ => return Err(unexpected_type::<M>(data_type)),
    };
    let ArrowType::Map(entries, _) = data_type.to_arrow() else {
        unreachable!("MAP and MULTISET map to Arrow maps");
    };
    let mut offsets = Vec::with_capacity(capacity + 1);
    offsets.push(0);
    Ok(MapBuilder {
        keys: K::builder(&key, capacity)?,
        values: V::builder(&value, capacity)?,
        entries,
        offsets,
        nulls: NullBufferBuilder::new(capacity),
    })
}

impl<KB, VB> MapBuilder<KB, VB> {
    fn append_entries<K, V>(
        &mut self,
        entries: impl ExactSizeIterator<Item = (K, V)>,
    ) -> Result<(), Error>
    where
        KB: ValueBuilder<K>,
        VB: ValueBuilder<V>,
    {
        let offset = next_offset(&self.offsets, entries.len())?;
        for (k, v) in entries {
            self.keys.append(k)?;
            self.values.append(v)?;
        }
        self.offsets.push(offset);
        self.nulls.append_non_null();
        Ok(())
    }

    fn push_null(&mut self) {
        let last = *self.offsets.last().expect("starts with 0");
        self.offsets.push(last);
        self.nulls.append_null();
    }

    fn build<K, V>(&mut self) -> Result<ArrayRef, Error>
    where
        KB: ValueBuilder<K>,
        VB: ValueBuilder<V>,
    {
        let ArrowType::Struct(fields) = self.entries.data_type() else {
            unreachable!("map entries are structs");
        };
        let entries = StructArray::try_new(
            fields.clone(),
            vec![self.keys.finish()?, self.values.finish()?],
            None,
        )?;
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        Ok(Arc::new(MapArray::try_new(
            self.entries.clone(),
            OffsetBuffer::new(offsets.into()),
            entries,
            self.nulls.finish(),
            false,
        )?))
    }
}

macro_rules! map_impls {
    ($map:ident, $reader:ident, $($bound:tt)*) => {
        pub struct $reader<'a, K: ArgValue<'a>, V: ArgValue<'a>>(MapReader<'a, K, V>);

        impl<K: SqlType, V: SqlType> SqlType for $map<K, V> {
            const ROOTS: RootSet = RootSet::of(TypeRoot::Map).with(TypeRoot::Multiset);

            fn data_type() -> DataType {
                DataType::map(K::data_type(), V::data_type()).not_null()
            }
        }

        impl<'a, K: ArgValue<'a> + $($bound)*, V: ArgValue<'a>> ArgValue<'a> for $map<K, V> {
            type Reader = $reader<'a, K, V>;

            fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
                MapReader::new::<$map<K, V>>(array).map($reader)
            }
        }

        impl<'a, K: ArgValue<'a> + $($bound)*, V: ArgValue<'a>> ArgReader<'a> for $reader<'a, K, V> {
            type Value = $map<K, V>;

            fn get(&self, index: usize) -> Result<$map<K, V>, Error> {
                self.0.entries(index).collect()
            }
        }

        impl<K: ResultValue + $($bound)*, V: ResultValue> ResultValue for $map<K, V> {
            type Builder = MapBuilder<K::Builder, V::Builder>;

            fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
                map_builder::<K, V, $map<K, V>>(data_type, capacity)
            }
        }

        impl<K: $($bound)*, V, KB: ValueBuilder<K>, VB: ValueBuilder<V>> ValueBuilder<$map<K, V>> for MapBuilder<KB, VB> {
            fn append(&mut self, value: $map<K, V>) -> Result<(), Error> {
                self.append_entries(value.into_iter())
            }

            fn append_null(&mut self) {
                self.push_null()
            }

            fn finish(&mut self) -> Result<ArrayRef, Error> {
                self.build::<K, V>()
            }
        }
    };
}

map_impls!(HashMap, HashMapReader, Eq + Hash);
map_impls!(BTreeMap, BTreeMapReader, Ord);
