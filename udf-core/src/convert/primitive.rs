//! Booleans, integers and floating-point numbers.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, BooleanBuilder, PrimitiveArray};
use arrow::buffer::ScalarBuffer;
use arrow::datatypes::{
    ArrowNativeType, ArrowPrimitiveType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type,
};

use super::lazy_nulls::LazyNulls;
use super::{ArgReader, ArgValue, ResultValue, SqlType, ValueBuilder, downcast, unexpected_type};
use crate::Error;
use crate::types::{DataType, RootSet, TypeRoot};

/// A Rust number with an Arrow primitive array type of the same width: what the
/// kernel tier of generated dispatch runs on.
pub trait PrimitiveValue: ArrowNativeType + Send + Sync + 'static {
    type Arrow: ArrowPrimitiveType<Native = Self>;
}

pub struct PrimitiveReader<'a, T: PrimitiveValue> {
    values: &'a [T],
}

impl<'a, T: PrimitiveValue> ArgReader<'a> for PrimitiveReader<'a, T> {
    type Value = T;

    // One load: always inlined, or the row loops around it pay a call per value.
    #[inline(always)]
    fn get(&self, index: usize) -> Result<T, Error> {
        Ok(self.values[index])
    }
}

/// Values in a plain vector (a push per row, nothing else), NULLs in a bitmap made only once
/// the first NULL comes.
pub struct PrimitiveValueBuilder<T: PrimitiveValue> {
    values: Vec<T>,
    nulls: LazyNulls,
}

impl<T: PrimitiveValue> PrimitiveValueBuilder<T> {
    fn with_capacity(capacity: usize) -> Self {
        PrimitiveValueBuilder {
            values: Vec::with_capacity(capacity),
            nulls: LazyNulls::new(capacity),
        }
    }
}

impl<T: PrimitiveValue> ValueBuilder<T> for PrimitiveValueBuilder<T> {
    #[inline(always)]
    fn append(&mut self, value: T) -> Result<(), Error> {
        self.values.push(value);
        self.nulls.append_valid();
        Ok(())
    }

    fn append_null(&mut self) {
        self.nulls.append_null(self.values.len());
        self.values.push(T::default());
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        let values = std::mem::take(&mut self.values);
        let array =
            PrimitiveArray::<T::Arrow>::new(ScalarBuffer::from(values), self.nulls.finish());
        Ok(Arc::new(array))
    }
}

macro_rules! primitive {
    ($($rust:ty => $arrow:ty, $root:ident, $ctor:ident;)*) => {$(
        impl PrimitiveValue for $rust {
            type Arrow = $arrow;
        }

        impl SqlType for $rust {
            const ROOTS: RootSet = RootSet::of(TypeRoot::$root);

            fn data_type() -> DataType {
                DataType::$ctor().not_null()
            }
        }

        impl<'a> ArgValue<'a> for $rust {
            type Reader = PrimitiveReader<'a, $rust>;

            fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
                let array = downcast::<PrimitiveArray<$arrow>, $rust>(array)?;
                Ok(PrimitiveReader { values: array.values() })
            }
        }

        impl ResultValue for $rust {
            type Builder = PrimitiveValueBuilder<$rust>;

            fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
                if data_type.root() != TypeRoot::$root {
                    return Err(unexpected_type::<$rust>(data_type));
                }
                Ok(PrimitiveValueBuilder::with_capacity(capacity))
            }
        }
    )*};
}

primitive! {
    i8 => Int8Type, TinyInt, tinyint;
    i16 => Int16Type, SmallInt, smallint;
    i32 => Int32Type, Int, int;
    i64 => Int64Type, BigInt, bigint;
    f32 => Float32Type, Float, float;
    f64 => Float64Type, Double, double;
}

impl SqlType for bool {
    const ROOTS: RootSet = RootSet::of(TypeRoot::Boolean);

    fn data_type() -> DataType {
        DataType::boolean().not_null()
    }
}

pub struct BoolReader<'a>(&'a BooleanArray);

impl<'a> ArgValue<'a> for bool {
    type Reader = BoolReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        downcast::<BooleanArray, bool>(array).map(BoolReader)
    }
}

impl<'a> ArgReader<'a> for BoolReader<'a> {
    type Value = bool;

    #[inline]
    fn get(&self, index: usize) -> Result<bool, Error> {
        Ok(self.0.value(index))
    }
}

pub struct BoolBuilder(BooleanBuilder);

impl ResultValue for bool {
    type Builder = BoolBuilder;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        if data_type.root() != TypeRoot::Boolean {
            return Err(unexpected_type::<bool>(data_type));
        }
        Ok(BoolBuilder(BooleanBuilder::with_capacity(capacity)))
    }
}

impl ValueBuilder<bool> for BoolBuilder {
    #[inline]
    fn append(&mut self, value: bool) -> Result<(), Error> {
        self.0.append_value(value);
        Ok(())
    }

    fn append_null(&mut self) {
        self.0.append_null()
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        Ok(Arc::new(self.0.finish()))
    }
}
