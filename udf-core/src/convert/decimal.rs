//! [`Decimal`] ↔ Arrow `Decimal128` (also reads `Decimal32`/`Decimal64`).

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, Decimal32Array, Decimal64Array, Decimal128Array, Decimal128Builder,
};
use arrow::datatypes::DataType as ArrowType;

use super::{
    ArgReader, ArgValue, ResultValue, SqlType, ValueBuilder, unexpected_array, unexpected_type,
};
use crate::types::{DataType, RootSet, TypeKind, TypeRoot};
use crate::{Decimal, Error};

impl SqlType for Decimal {
    const ROOTS: RootSet = RootSet::of(TypeRoot::Decimal);

    /// `DECIMAL(38, 18)`, Flink's default for `BigDecimal`.
    fn data_type() -> DataType {
        DataType::decimal(38, 18).not_null()
    }
}

pub enum DecimalReader<'a> {
    D32(&'a [i32], u8),
    D64(&'a [i64], u8),
    D128(&'a [i128], u8),
}

impl<'a> ArgValue<'a> for Decimal {
    type Reader = DecimalReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        let scale = match array.data_type() {
            ArrowType::Decimal32(_, s)
            | ArrowType::Decimal64(_, s)
            | ArrowType::Decimal128(_, s)
                if *s >= 0 =>
            {
                *s as u8
            }
            _ => return Err(unexpected_array::<Decimal>(array)),
        };
        let any = array.as_any();
        if let Some(a) = any.downcast_ref::<Decimal128Array>() {
            Ok(DecimalReader::D128(a.values(), scale))
        } else if let Some(a) = any.downcast_ref::<Decimal64Array>() {
            Ok(DecimalReader::D64(a.values(), scale))
        } else if let Some(a) = any.downcast_ref::<Decimal32Array>() {
            Ok(DecimalReader::D32(a.values(), scale))
        } else {
            Err(unexpected_array::<Decimal>(array))
        }
    }
}

impl<'a> ArgReader<'a> for DecimalReader<'a> {
    type Value = Decimal;

    #[inline]
    fn get(&self, index: usize) -> Result<Decimal, Error> {
        Ok(match self {
            DecimalReader::D32(v, s) => Decimal::new(v[index] as i128, *s),
            DecimalReader::D64(v, s) => Decimal::new(v[index] as i128, *s),
            DecimalReader::D128(v, s) => Decimal::new(v[index], *s),
        })
    }
}

/// Writes decimals rounded half-up to the declared scale; a value with more digits than the
/// declared precision is an error (Flink would turn it into NULL silently).
pub struct DecimalBuilder {
    inner: Decimal128Builder,
    precision: u8,
    scale: u8,
}

impl ResultValue for Decimal {
    type Builder = DecimalBuilder;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        let TypeKind::Decimal { precision, scale } = data_type.kind else {
            return Err(unexpected_type::<Decimal>(data_type));
        };
        let inner = Decimal128Builder::with_capacity(capacity)
            .with_precision_and_scale(precision, scale as i8)?;
        Ok(DecimalBuilder {
            inner,
            precision,
            scale,
        })
    }
}

impl ValueBuilder<Decimal> for DecimalBuilder {
    fn append(&mut self, value: Decimal) -> Result<(), Error> {
        let fitted = value.fit(self.precision, self.scale)?;
        self.inner.append_value(fitted.unscaled());
        Ok(())
    }

    fn append_null(&mut self) {
        self.inner.append_null()
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        Ok(Arc::new(self.inner.finish()))
    }
}
