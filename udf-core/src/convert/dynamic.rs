//! Dynamically typed values: `Value` (any SQL type) and the polymorphic `Row`.
//!
//! This is the slow, flexible path (one `Value` per field per row); statically typed
//! parameters never come through here.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, IntervalDayTimeArray, IntervalYearMonthArray, ListArray, MapArray,
    NullArray, StructArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{
    DataType as ArrowType, Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type,
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, IntervalDayTime,
    IntervalUnit, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};

use super::temporal::{date_from_days, instant_from, time_from_nanos};
use super::{
    ArgReader, ArgValue, Inference, ResultValue, SqlType, ValueBuilder, unexpected_array,
    unexpected_type,
};
use crate::types::{DataType, RootSet, TypeKind, TypeRoot};
use crate::{Decimal, Error, Row, Value};

/// The value at `index` of any supported Arrow array (`Value::Null` for a NULL slot).
pub fn array_value(array: &dyn Array, index: usize) -> Result<Value, Error> {
    if array.is_null(index) {
        return Ok(Value::Null);
    }
    let value = match array.data_type() {
        ArrowType::Null => Value::Null,
        ArrowType::Boolean => Value::Boolean(array.as_boolean().value(index)),
        ArrowType::Int8 => Value::TinyInt(array.as_primitive::<Int8Type>().value(index)),
        ArrowType::Int16 => Value::SmallInt(array.as_primitive::<Int16Type>().value(index)),
        ArrowType::Int32 => Value::Int(array.as_primitive::<Int32Type>().value(index)),
        ArrowType::Int64 => Value::BigInt(array.as_primitive::<Int64Type>().value(index)),
        ArrowType::Float32 => Value::Float(array.as_primitive::<Float32Type>().value(index)),
        ArrowType::Float64 => Value::Double(array.as_primitive::<Float64Type>().value(index)),
        ArrowType::Decimal32(_, s) => decimal(
            array.as_primitive::<Decimal32Type>().value(index) as i128,
            *s,
        )?,
        ArrowType::Decimal64(_, s) => decimal(
            array.as_primitive::<Decimal64Type>().value(index) as i128,
            *s,
        )?,
        ArrowType::Decimal128(_, s) => {
            decimal(array.as_primitive::<Decimal128Type>().value(index), *s)?
        }
        ArrowType::Utf8 => Value::String(array.as_string::<i32>().value(index).to_owned()),
        ArrowType::LargeUtf8 => Value::String(array.as_string::<i64>().value(index).to_owned()),
        ArrowType::Utf8View => Value::String(array.as_string_view().value(index).to_owned()),
        ArrowType::Binary => Value::Bytes(array.as_binary::<i32>().value(index).to_vec()),
        ArrowType::LargeBinary => Value::Bytes(array.as_binary::<i64>().value(index).to_vec()),
        ArrowType::BinaryView => Value::Bytes(array.as_binary_view().value(index).to_vec()),
        ArrowType::FixedSizeBinary(_) => {
            Value::Bytes(array.as_fixed_size_binary().value(index).to_vec())
        }
        ArrowType::Date32 => Value::Date(date_from_days(
            array.as_primitive::<Date32Type>().value(index),
        )?),
        ArrowType::Date64 => {
            let millis = array.as_primitive::<Date64Type>().value(index);
            Value::Date(instant_from(millis, TimeUnit::Millisecond)?.date_naive())
        }
        ArrowType::Time32(TimeUnit::Second) => Value::Time(time_from_nanos(
            array.as_primitive::<Time32SecondType>().value(index) as i64 * 1_000_000_000,
        )?),
        ArrowType::Time32(_) => Value::Time(time_from_nanos(
            array.as_primitive::<Time32MillisecondType>().value(index) as i64 * 1_000_000,
        )?),
        ArrowType::Time64(TimeUnit::Microsecond) => Value::Time(time_from_nanos(
            array.as_primitive::<Time64MicrosecondType>().value(index) * 1_000,
        )?),
        ArrowType::Time64(_) => Value::Time(time_from_nanos(
            array.as_primitive::<Time64NanosecondType>().value(index),
        )?),
        ArrowType::Timestamp(unit, zone) => {
            let raw = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(index),
                TimeUnit::Millisecond => array
                    .as_primitive::<TimestampMillisecondType>()
                    .value(index),
                TimeUnit::Microsecond => array
                    .as_primitive::<TimestampMicrosecondType>()
                    .value(index),
                TimeUnit::Nanosecond => {
                    array.as_primitive::<TimestampNanosecondType>().value(index)
                }
            };
            let instant = instant_from(raw, *unit)?;
            if zone.is_some() {
                Value::TimestampLtz(instant)
            } else {
                Value::Timestamp(instant.naive_utc())
            }
        }
        ArrowType::Interval(IntervalUnit::YearMonth) => Value::IntervalMonths(
            array
                .as_any()
                .downcast_ref::<IntervalYearMonthArray>()
                .expect("type checked")
                .value(index),
        ),
        ArrowType::Interval(IntervalUnit::DayTime) => {
            let v = array
                .as_any()
                .downcast_ref::<IntervalDayTimeArray>()
                .expect("type checked")
                .value(index);
            Value::IntervalMillis(v.days as i64 * 86_400_000 + v.milliseconds as i64)
        }
        ArrowType::List(_) => list_value(array.as_list::<i32>().value(index).as_ref())?,
        ArrowType::LargeList(_) => list_value(array.as_list::<i64>().value(index).as_ref())?,
        ArrowType::Map(_, _) => {
            let entries = array.as_map().value(index);
            let (keys, values) = (entries.column(0), entries.column(1));
            Value::Map(
                (0..entries.len())
                    .map(|i| {
                        Ok((
                            array_value(keys.as_ref(), i)?,
                            array_value(values.as_ref(), i)?,
                        ))
                    })
                    .collect::<Result<_, Error>>()?,
            )
        }
        ArrowType::Struct(_) => Value::Row(row_value(array.as_struct(), index)?),
        _ => return Err(unexpected_array::<Value>(array)),
    };
    Ok(value)
}

fn decimal(unscaled: i128, scale: i8) -> Result<Value, Error> {
    let scale = u8::try_from(scale)
        .map_err(|_| Error::msg(format!("negative decimal scale {scale} is not supported")))?;
    Ok(Value::Decimal(Decimal::new(unscaled, scale)))
}

fn list_value(items: &dyn Array) -> Result<Value, Error> {
    Ok(Value::Array(
        (0..items.len())
            .map(|i| array_value(items, i))
            .collect::<Result<_, _>>()?,
    ))
}

fn row_value(array: &StructArray, index: usize) -> Result<Row, Error> {
    let values = array
        .columns()
        .iter()
        .map(|column| array_value(column.as_ref(), index))
        .collect::<Result<_, _>>()?;
    Ok(Row::new(values))
}

fn mismatch(expected: &DataType, value: &Value) -> Error {
    Error::msg(format!(
        "expected a {expected} value, got {} `{value}`",
        value.kind_name()
    ))
}

/// Builds an array of `data_type` from values; a value of another type is an error.
pub fn values_to_array(data_type: &DataType, values: &[Value]) -> Result<ArrayRef, Error> {
    fn typed<'v, T: ResultValue>(
        data_type: &DataType,
        values: &'v [Value],
        extract: impl Fn(&'v Value) -> Option<T>,
    ) -> Result<ArrayRef, Error> {
        let mut builder = T::builder(data_type, values.len())?;
        for value in values {
            if value.is_null() {
                builder.append_null();
            } else {
                builder.append(extract(value).ok_or_else(|| mismatch(data_type, value))?)?;
            }
        }
        builder.finish()
    }

    let validity = || NullBuffer::from(values.iter().map(|v| !v.is_null()).collect::<Vec<_>>());
    match &data_type.kind {
        TypeKind::Boolean => typed(data_type, values, |v| match v {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }),
        TypeKind::TinyInt => typed(data_type, values, |v| match v {
            Value::TinyInt(n) => Some(*n),
            _ => None,
        }),
        TypeKind::SmallInt => typed(data_type, values, |v| match v {
            Value::TinyInt(n) => Some(*n as i16),
            Value::SmallInt(n) => Some(*n),
            _ => None,
        }),
        TypeKind::Int => typed(data_type, values, |v| match v {
            Value::TinyInt(n) => Some(*n as i32),
            Value::SmallInt(n) => Some(*n as i32),
            Value::Int(n) => Some(*n),
            _ => None,
        }),
        TypeKind::BigInt => typed(data_type, values, |v| match v {
            Value::TinyInt(n) => Some(*n as i64),
            Value::SmallInt(n) => Some(*n as i64),
            Value::Int(n) => Some(*n as i64),
            Value::BigInt(n) => Some(*n),
            _ => None,
        }),
        TypeKind::Float => typed(data_type, values, |v| match v {
            Value::Float(n) => Some(*n),
            _ => None,
        }),
        TypeKind::Double => typed(data_type, values, |v| match v {
            Value::Float(n) => Some(*n as f64),
            Value::Double(n) => Some(*n),
            _ => None,
        }),
        TypeKind::Decimal { .. } => typed(data_type, values, |v| match v {
            Value::Decimal(d) => Some(*d),
            _ => None,
        }),
        TypeKind::Char { .. } | TypeKind::VarChar { .. } => typed(data_type, values, |v| match v {
            Value::String(s) => Some(s.as_str()),
            _ => None,
        }),
        TypeKind::Binary { .. } | TypeKind::VarBinary { .. } | TypeKind::Raw { .. } => {
            typed(data_type, values, |v| match v {
                Value::Bytes(b) => Some(b.as_slice()),
                _ => None,
            })
        }
        TypeKind::Date => typed(data_type, values, |v| match v {
            Value::Date(d) => Some(*d),
            _ => None,
        }),
        TypeKind::Time { .. } => typed(data_type, values, |v| match v {
            Value::Time(t) => Some(*t),
            _ => None,
        }),
        TypeKind::Timestamp { .. } => typed(data_type, values, |v| match v {
            Value::Timestamp(t) => Some(*t),
            _ => None,
        }),
        TypeKind::TimestampLtz { .. } => typed(data_type, values, |v| match v {
            Value::TimestampLtz(t) => Some(*t),
            _ => None,
        }),
        TypeKind::IntervalYearMonth(_) => {
            let months = values
                .iter()
                .map(|v| match v {
                    Value::Null => Ok(0),
                    Value::IntervalMonths(m) => Ok(*m),
                    other => Err(mismatch(data_type, other)),
                })
                .collect::<Result<Vec<_>, Error>>()?;
            Ok(Arc::new(IntervalYearMonthArray::new(
                months.into(),
                Some(validity()),
            )))
        }
        TypeKind::IntervalDayTime(_) => {
            let spans = values
                .iter()
                .map(|v| match v {
                    Value::Null => Ok(IntervalDayTime::ZERO),
                    Value::IntervalMillis(ms) => {
                        let days = i32::try_from(ms.div_euclid(86_400_000)).map_err(|_| {
                            Error::msg(format!("interval of {ms} ms is out of range"))
                        })?;
                        Ok(IntervalDayTime::new(days, ms.rem_euclid(86_400_000) as i32))
                    }
                    other => Err(mismatch(data_type, other)),
                })
                .collect::<Result<Vec<_>, Error>>()?;
            Ok(Arc::new(IntervalDayTimeArray::new(
                spans.into(),
                Some(validity()),
            )))
        }
        TypeKind::Array(element) => {
            let mut offsets = vec![0i32];
            let mut items = Vec::new();
            for value in values {
                match value {
                    Value::Null => {}
                    Value::Array(list) => items.extend(list.iter().cloned()),
                    other => return Err(mismatch(data_type, other)),
                }
                offsets.push(
                    i32::try_from(items.len())
                        .map_err(|_| Error::msg("too many ARRAY elements in one batch"))?,
                );
            }
            let child = values_to_array(element, &items)?;
            Ok(Arc::new(ListArray::try_new(
                Arc::new(element.to_arrow_field("item")),
                OffsetBuffer::new(offsets.into()),
                child,
                Some(validity()),
            )?))
        }
        TypeKind::Map {
            key,
            value: value_type,
        } => {
            let mut offsets = vec![0i32];
            let (mut keys, mut vals) = (Vec::new(), Vec::new());
            for value in values {
                match value {
                    Value::Null => {}
                    Value::Map(entries) => {
                        for (k, v) in entries {
                            keys.push(k.clone());
                            vals.push(v.clone());
                        }
                    }
                    other => return Err(mismatch(data_type, other)),
                }
                offsets.push(
                    i32::try_from(keys.len())
                        .map_err(|_| Error::msg("too many MAP entries in one batch"))?,
                );
            }
            let ArrowType::Map(entries_field, _) = data_type.to_arrow() else {
                unreachable!("MAP maps to an Arrow map");
            };
            let ArrowType::Struct(fields) = entries_field.data_type() else {
                unreachable!("map entries are structs");
            };
            let entries = StructArray::try_new(
                fields.clone(),
                vec![
                    values_to_array(&key.as_ref().clone().not_null(), &keys)?,
                    values_to_array(value_type, &vals)?,
                ],
                None,
            )?;
            Ok(Arc::new(MapArray::try_new(
                entries_field,
                OffsetBuffer::new(offsets.into()),
                entries,
                Some(validity()),
                false,
            )?))
        }
        TypeKind::Multiset(_) => Err(unexpected_type::<Value>(data_type)),
        TypeKind::Row(fields) => {
            let mut columns = Vec::with_capacity(fields.len());
            for (i, field) in fields.iter().enumerate() {
                let column = values
                    .iter()
                    .map(|value| match value {
                        Value::Null => Ok(Value::Null),
                        Value::Row(row) if row.len() == fields.len() => Ok(row.values()[i].clone()),
                        other => Err(mismatch(data_type, other)),
                    })
                    .collect::<Result<Vec<_>, Error>>()?;
                columns.push(values_to_array(&field.data_type, &column)?);
            }
            let ArrowType::Struct(arrow_fields) = data_type.to_arrow() else {
                unreachable!("ROW maps to an Arrow struct");
            };
            Ok(Arc::new(StructArray::try_new_with_length(
                arrow_fields,
                columns,
                Some(validity()),
                values.len(),
            )?))
        }
        TypeKind::Null => Ok(Arc::new(NullArray::new(values.len()))),
    }
}

impl SqlType for Value {
    const ROOTS: RootSet = RootSet::ALL;
    const INFERENCE: Inference = Inference::Any;

    fn data_type() -> DataType {
        DataType::null()
    }
}

pub struct ValueReader<'a>(&'a dyn Array);

impl<'a> ArgValue<'a> for Value {
    type Reader = ValueReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        Ok(ValueReader(array))
    }
}

impl<'a> ArgReader<'a> for ValueReader<'a> {
    type Value = Value;

    fn get(&self, index: usize) -> Result<Value, Error> {
        array_value(self.0, index)
    }
}

impl SqlType for Row {
    const ROOTS: RootSet = RootSet::of(TypeRoot::Row);
    const INFERENCE: Inference = Inference::AnyRow;

    fn data_type() -> DataType {
        DataType::row([])
    }
}

/// Reads rows that know their field names (shared by every row read).
pub struct RowReader<'a> {
    array: &'a StructArray,
    names: std::sync::Arc<[String]>,
}

impl<'a> ArgValue<'a> for Row {
    type Reader = RowReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        let array = array
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| unexpected_array::<Row>(array))?;
        let names = array.fields().iter().map(|f| f.name().clone()).collect();
        Ok(RowReader { array, names })
    }
}

impl<'a> ArgReader<'a> for RowReader<'a> {
    type Value = Row;

    fn get(&self, index: usize) -> Result<Row, Error> {
        let values = self
            .array
            .columns()
            .iter()
            .map(|column| array_value(column.as_ref(), index))
            .collect::<Result<_, _>>()?;
        Ok(Row::with_names(values, self.names.clone()))
    }
}

/// Collects values and converts them once per batch to the declared type.
pub struct DynamicBuilder {
    data_type: DataType,
    values: Vec<Value>,
}

impl DynamicBuilder {
    pub fn new(data_type: &DataType, capacity: usize) -> Self {
        DynamicBuilder {
            data_type: data_type.clone(),
            values: Vec::with_capacity(capacity),
        }
    }

    fn build(&mut self) -> Result<ArrayRef, Error> {
        values_to_array(&self.data_type, &std::mem::take(&mut self.values))
    }
}

impl ResultValue for Value {
    type Builder = DynamicBuilder;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        Ok(DynamicBuilder::new(data_type, capacity))
    }
}

impl ResultValue for Row {
    type Builder = DynamicBuilder;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        if data_type.root() != TypeRoot::Row {
            return Err(unexpected_type::<Row>(data_type));
        }
        Ok(DynamicBuilder::new(data_type, capacity))
    }
}

impl ValueBuilder<Value> for DynamicBuilder {
    fn append(&mut self, value: Value) -> Result<(), Error> {
        self.values.push(value);
        Ok(())
    }

    fn append_null(&mut self) {
        self.values.push(Value::Null)
    }

    /// Type mismatches surface here, once per batch.
    fn finish(&mut self) -> Result<ArrayRef, Error> {
        self.build()
    }
}

impl ValueBuilder<Row> for DynamicBuilder {
    fn append(&mut self, row: Row) -> Result<(), Error> {
        self.values.push(Value::Row(row));
        Ok(())
    }

    fn append_null(&mut self) {
        self.values.push(Value::Null)
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        self.build()
    }
}
