//! Dynamically typed SQL values: the `ANY` argument type and the polymorphic [`Row`].

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use serde::{Deserialize, Serialize};

use crate::Decimal;

/// One SQL value of any type.
///
/// A parameter of type `Value` accepts an argument of any SQL type (Flink's
/// `InputGroup.ANY`); as a result type it needs a `#[data_type]` hint or a custom
/// output type, which then decides how the value is stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Value {
    Null,
    Boolean(bool),
    TinyInt(i8),
    SmallInt(i16),
    Int(i32),
    BigInt(i64),
    Float(f32),
    Double(f64),
    Decimal(Decimal),
    String(String),
    Bytes(Vec<u8>),
    Date(NaiveDate),
    Time(NaiveTime),
    Timestamp(NaiveDateTime),
    TimestampLtz(DateTime<Utc>),
    /// `INTERVAL YEAR TO MONTH`, in months.
    IntervalMonths(i32),
    /// `INTERVAL DAY TO SECOND`, in milliseconds.
    IntervalMillis(i64),
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
    Row(Row),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value as an `i64`, for any integer type.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::TinyInt(v) => Some(v.into()),
            Value::SmallInt(v) => Some(v.into()),
            Value::Int(v) => Some(v.into()),
            Value::BigInt(v) => Some(v),
            _ => None,
        }
    }

    /// The value as an `i32`, for integer types whose value fits.
    pub fn as_i32(&self) -> Option<i32> {
        self.as_i64().and_then(|v| i32::try_from(v).ok())
    }

    /// The value as an `f64`, for floating-point and integer types.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(v) => Some(v.into()),
            Value::Double(v) => Some(v),
            _ => self.as_i64().map(|v| v as f64),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Boolean(b) => Some(b),
            _ => None,
        }
    }

    /// The name of the variant, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Boolean(_) => "BOOLEAN",
            Value::TinyInt(_) => "TINYINT",
            Value::SmallInt(_) => "SMALLINT",
            Value::Int(_) => "INT",
            Value::BigInt(_) => "BIGINT",
            Value::Float(_) => "FLOAT",
            Value::Double(_) => "DOUBLE",
            Value::Decimal(_) => "DECIMAL",
            Value::String(_) => "STRING",
            Value::Bytes(_) => "BYTES",
            Value::Date(_) => "DATE",
            Value::Time(_) => "TIME",
            Value::Timestamp(_) => "TIMESTAMP",
            Value::TimestampLtz(_) => "TIMESTAMP_LTZ",
            Value::IntervalMonths(_) => "INTERVAL YEAR TO MONTH",
            Value::IntervalMillis(_) => "INTERVAL DAY TO SECOND",
            Value::Array(_) => "ARRAY",
            Value::Map(_) => "MAP",
            Value::Row(_) => "ROW",
        }
    }
}

/// Prints values the way SQL clients show them: strings bare, NULL as `NULL`,
/// arrays as `[a, b]`, maps as `{k=v}`, rows as `(a, b)`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Boolean(v) => write!(f, "{v}"),
            Value::TinyInt(v) => write!(f, "{v}"),
            Value::SmallInt(v) => write!(f, "{v}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::BigInt(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Double(v) => write!(f, "{v}"),
            Value::Decimal(v) => write!(f, "{v}"),
            Value::String(v) => f.write_str(v),
            Value::Bytes(v) => {
                f.write_str("x'")?;
                for b in v {
                    write!(f, "{b:02x}")?;
                }
                f.write_str("'")
            }
            Value::Date(v) => write!(f, "{v}"),
            Value::Time(v) => write!(f, "{v}"),
            Value::Timestamp(v) => write!(f, "{}", v.format("%Y-%m-%d %H:%M:%S%.f")),
            Value::TimestampLtz(v) => write!(f, "{}", v.format("%Y-%m-%d %H:%M:%S%.fZ")),
            Value::IntervalMonths(v) => write!(f, "{v} months"),
            Value::IntervalMillis(v) => write!(f, "{v} ms"),
            Value::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Map(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}={v}")?;
                }
                f.write_str("}")
            }
            Value::Row(row) => write!(f, "{row}"),
        }
    }
}

macro_rules! value_from {
    ($($t:ty => $variant:ident),* $(,)?) => {
        $(impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::$variant(v.into())
            }
        })*
    };
}

value_from!(
    bool => Boolean, i8 => TinyInt, i16 => SmallInt, i32 => Int, i64 => BigInt, f32 => Float,
    f64 => Double, Decimal => Decimal, String => String, &str => String, Vec<u8> => Bytes,
    NaiveDate => Date, NaiveTime => Time, NaiveDateTime => Timestamp, DateTime<Utc> => TimestampLtz,
    Row => Row,
);

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// A row whose fields are known only at run time (Flink's `Row`): values by position, and
/// by name when the row was read from a table.
///
/// Its SQL type comes from a `#[data_type("ROW<...>")]` hint (or, for PTF table arguments,
/// from the table). Two rows are equal when their values are; names are not compared.
// Not `Default`: an absent `Row` state is a row of NULLs of its hint, not an empty row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    values: Vec<Value>,
    names: Option<Arc<[String]>>,
}

impl PartialEq for Row {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

impl Row {
    pub fn new(values: Vec<Value>) -> Self {
        Row {
            values,
            names: None,
        }
    }

    /// `Row::of([Value::from(1), Value::from("a")])`, like Flink's `Row.of(...)`.
    pub fn of(values: impl IntoIterator<Item = Value>) -> Self {
        Row::new(values.into_iter().collect())
    }

    /// A row whose fields can also be found by name (`names` has one entry per value).
    pub fn with_names(values: Vec<Value>, names: Arc<[String]>) -> Self {
        debug_assert_eq!(values.len(), names.len());
        Row {
            values,
            names: Some(names),
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The field at `index`, or `None` past the end.
    pub fn get(&self, index: usize) -> Option<&Value> {
        self.values.get(index)
    }

    /// The field named `name` (Flink's `getField(String)`), if the row has names and one
    /// of them is `name`.
    pub fn field(&self, name: &str) -> Option<&Value> {
        let names = self.names.as_deref()?;
        let index = names.iter().position(|n| n == name)?;
        self.values.get(index)
    }

    /// The field names, if the row has them.
    pub fn field_names(&self) -> Option<&[String]> {
        self.names.as_deref()
    }

    /// Replaces the field at `index` (Flink's `setField`); `false` past the end.
    pub fn set(&mut self, index: usize, value: impl Into<Value>) -> bool {
        match self.values.get_mut(index) {
            Some(slot) => {
                *slot = value.into();
                true
            }
            None => false,
        }
    }

    /// Replaces the field named `name`; `false` if there is none.
    pub fn set_field(&mut self, name: &str, value: impl Into<Value>) -> bool {
        let index = self
            .names
            .as_deref()
            .and_then(|names| names.iter().position(|n| n == name));
        match index {
            Some(index) => self.set(index, value),
            None => false,
        }
    }

    pub fn values(&self) -> &[Value] {
        &self.values
    }

    pub fn into_values(self) -> Vec<Value> {
        self.values
    }
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, value) in self.values.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{value}")?;
        }
        f.write_str(")")
    }
}
