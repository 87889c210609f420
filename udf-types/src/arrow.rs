//! Mapping between SQL types and Arrow types.
//!
//! SQL → Arrow is total. Arrow → SQL covers every Arrow type a SQL type maps to, plus the
//! physical variants DataFusion produces for the same logical type (`Utf8View`, `LargeUtf8`,
//! `LargeList`, ...). Lengths of CHAR/VARCHAR/BINARY and the RAW class do not survive the trip.

use std::fmt;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, Fields, IntervalUnit, TimeUnit};

use crate::model::*;

/// An Arrow type with no SQL counterpart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedArrowType(pub ArrowType);

impl fmt::Display for UnsupportedArrowType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the Arrow type {} has no SQL counterpart", self.0)
    }
}

impl std::error::Error for UnsupportedArrowType {}

/// Arrow's unit for a fractional-second precision.
pub fn time_unit(precision: u8) -> TimeUnit {
    match precision {
        0 => TimeUnit::Second,
        1..=3 => TimeUnit::Millisecond,
        4..=6 => TimeUnit::Microsecond,
        _ => TimeUnit::Nanosecond,
    }
}

fn precision_of(unit: TimeUnit) -> u8 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    }
}

/// The time zone Arrow carries for TIMESTAMP_LTZ values (instants).
pub const LTZ_TIME_ZONE: &str = "UTC";

impl DataType {
    /// The Arrow type that holds values of this SQL type.
    pub fn to_arrow(&self) -> ArrowType {
        match &self.kind {
            TypeKind::Boolean => ArrowType::Boolean,
            TypeKind::TinyInt => ArrowType::Int8,
            TypeKind::SmallInt => ArrowType::Int16,
            TypeKind::Int => ArrowType::Int32,
            TypeKind::BigInt => ArrowType::Int64,
            TypeKind::Float => ArrowType::Float32,
            TypeKind::Double => ArrowType::Float64,
            TypeKind::Decimal { precision, scale } => {
                ArrowType::Decimal128(*precision, *scale as i8)
            }
            TypeKind::Char { .. } | TypeKind::VarChar { .. } => ArrowType::Utf8,
            TypeKind::Binary { .. } | TypeKind::VarBinary { .. } | TypeKind::Raw { .. } => {
                ArrowType::Binary
            }
            TypeKind::Date => ArrowType::Date32,
            TypeKind::Time { precision } => match time_unit(*precision) {
                unit @ (TimeUnit::Second | TimeUnit::Millisecond) => ArrowType::Time32(unit),
                unit => ArrowType::Time64(unit),
            },
            TypeKind::Timestamp { precision } => ArrowType::Timestamp(time_unit(*precision), None),
            TypeKind::TimestampLtz { precision } => {
                ArrowType::Timestamp(time_unit(*precision), Some(Arc::from(LTZ_TIME_ZONE)))
            }
            TypeKind::IntervalYearMonth(_) => ArrowType::Interval(IntervalUnit::YearMonth),
            TypeKind::IntervalDayTime(_) => ArrowType::Interval(IntervalUnit::DayTime),
            TypeKind::Array(element) => ArrowType::List(Arc::new(element.to_arrow_field("item"))),
            TypeKind::Multiset(element) => map_type(
                element.to_arrow_field("key").with_nullable(false),
                Field::new("value", ArrowType::Int32, false),
            ),
            TypeKind::Map { key, value } => {
                // Arrow map keys cannot be null.
                map_type(
                    key.to_arrow_field("key").with_nullable(false),
                    value.to_arrow_field("value"),
                )
            }
            TypeKind::Row(fields) => ArrowType::Struct(
                fields
                    .iter()
                    .map(|f| f.data_type.to_arrow_field(&f.name))
                    .collect::<Fields>(),
            ),
            TypeKind::Null => ArrowType::Null,
        }
    }

    /// An Arrow field of this type; nullability carries over.
    pub fn to_arrow_field(&self, name: &str) -> Field {
        Field::new(name, self.to_arrow(), self.nullable)
    }

    /// The SQL type of an Arrow type (nullable; nested nullability from the child fields).
    pub fn from_arrow(arrow: &ArrowType) -> Result<DataType, UnsupportedArrowType> {
        let unsupported = || UnsupportedArrowType(arrow.clone());
        let kind = match arrow {
            ArrowType::Null => TypeKind::Null,
            ArrowType::Boolean => TypeKind::Boolean,
            ArrowType::Int8 => TypeKind::TinyInt,
            ArrowType::Int16 => TypeKind::SmallInt,
            ArrowType::Int32 => TypeKind::Int,
            ArrowType::Int64 => TypeKind::BigInt,
            ArrowType::Float32 => TypeKind::Float,
            ArrowType::Float64 => TypeKind::Double,
            ArrowType::Decimal32(p, s)
            | ArrowType::Decimal64(p, s)
            | ArrowType::Decimal128(p, s)
                if *s >= 0 && *p <= MAX_DECIMAL_PRECISION && (*s as u8) <= *p =>
            {
                TypeKind::Decimal {
                    precision: *p,
                    scale: *s as u8,
                }
            }
            ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => {
                TypeKind::VarChar { length: MAX_LENGTH }
            }
            ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView => {
                TypeKind::VarBinary { length: MAX_LENGTH }
            }
            ArrowType::FixedSizeBinary(n) if *n > 0 => TypeKind::Binary { length: *n as u32 },
            ArrowType::Date32 | ArrowType::Date64 => TypeKind::Date,
            ArrowType::Time32(unit) | ArrowType::Time64(unit) => TypeKind::Time {
                precision: precision_of(*unit),
            },
            ArrowType::Timestamp(unit, None) => TypeKind::Timestamp {
                precision: precision_of(*unit),
            },
            ArrowType::Timestamp(unit, Some(_)) => TypeKind::TimestampLtz {
                precision: precision_of(*unit),
            },
            ArrowType::Interval(IntervalUnit::YearMonth) => {
                TypeKind::IntervalYearMonth(YearMonthInterval {
                    resolution: YearMonthResolution::YearToMonth,
                    year_precision: DEFAULT_YEAR_PRECISION,
                })
            }
            ArrowType::Interval(IntervalUnit::DayTime) => {
                TypeKind::IntervalDayTime(DayTimeInterval {
                    resolution: DayTimeResolution::DayToSecond,
                    day_precision: DEFAULT_DAY_PRECISION,
                    fractional_precision: 3,
                })
            }
            ArrowType::List(field)
            | ArrowType::LargeList(field)
            | ArrowType::ListView(field)
            | ArrowType::LargeListView(field)
            | ArrowType::FixedSizeList(field, _) => {
                TypeKind::Array(Box::new(DataType::from_arrow_field(field)?))
            }
            ArrowType::Map(entries, _) => {
                let ArrowType::Struct(kv) = entries.data_type() else {
                    return Err(unsupported());
                };
                if kv.len() != 2 {
                    return Err(unsupported());
                }
                TypeKind::Map {
                    key: Box::new(DataType::from_arrow_field(&kv[0])?),
                    value: Box::new(DataType::from_arrow_field(&kv[1])?),
                }
            }
            ArrowType::Struct(fields) => TypeKind::Row(
                fields
                    .iter()
                    .map(|f| {
                        Ok(RowField::new(
                            f.name().clone(),
                            DataType::from_arrow_field(f)?,
                        ))
                    })
                    .collect::<Result<_, UnsupportedArrowType>>()?,
            ),
            ArrowType::Dictionary(_, value) => return DataType::from_arrow(value),
            _ => return Err(unsupported()),
        };
        Ok(DataType::new(kind, true))
    }

    /// The SQL type of an Arrow field, with the field's nullability.
    pub fn from_arrow_field(field: &Field) -> Result<DataType, UnsupportedArrowType> {
        Ok(DataType::from_arrow(field.data_type())?.with_nullable(field.is_nullable()))
    }
}

fn map_type(key: Field, value: Field) -> ArrowType {
    let entries = Field::new(
        "entries",
        ArrowType::Struct(Fields::from(vec![key, value])),
        false,
    );
    ArrowType::Map(Arc::new(entries), false)
}
