//! Dynamically typed SQL values: the `ANY` argument type and the polymorphic [`Row`].

use std::fmt;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};

use crate::Decimal;

/// One SQL value of any type.
///
/// A parameter of type `Value` accepts an argument of any SQL type (Flink's
/// `InputGroup.ANY`); as a result type it needs a `#[data_type]` hint or a custom
/// output type, which then decides how the value is stored.
#[derive(Clone, Debug, PartialEq)]
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

/// A row whose fields are known only at run time (Flink's `Row`): values by position.
///
/// Its SQL type comes from a `#[data_type("ROW<...>")]` hint (or, for PTF table arguments,
/// from the table).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    values: Vec<Value>,
}

impl Row {
    pub fn new(values: Vec<Value>) -> Self {
        Row { values }
    }

    /// `Row::of([Value::from(1), Value::from("a")])`, like Flink's `Row.of(...)`.
    pub fn of(values: impl IntoIterator<Item = Value>) -> Self {
        Row {
            values: values.into_iter().collect(),
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
