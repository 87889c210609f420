//! The SQL logical types of Flink, each with its nullability.

/// Largest length of CHAR/VARCHAR/BINARY/VARBINARY; `STRING` is `VARCHAR(MAX_LENGTH)`.
pub const MAX_LENGTH: u32 = i32::MAX as u32;
/// Largest precision of DECIMAL.
pub const MAX_DECIMAL_PRECISION: u8 = 38;
/// Largest fractional-second precision of TIME, TIMESTAMP and TIMESTAMP_LTZ.
pub const MAX_TIME_PRECISION: u8 = 9;

/// Deepest nesting of ARRAY, MULTISET, MAP and ROW a parsed type may have: code that walks a
/// type (printing, Arrow conversion, value conversion) recurses once per level, and a type
/// string is user input.
pub const MAX_NESTING: usize = 64;

/// A SQL data type: a logical type plus whether it admits NULL.
///
/// Types print and parse in Flink's syntax (`"ROW<s STRING, t TIMESTAMP_LTZ(3)> NOT NULL"`);
/// [`std::str::FromStr`] and [`std::fmt::Display`] round-trip.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DataType {
    pub kind: TypeKind,
    pub nullable: bool,
}

/// The logical type without nullability.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    Boolean,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    Float,
    Double,
    Decimal {
        precision: u8,
        scale: u8,
    },
    Char {
        length: u32,
    },
    VarChar {
        length: u32,
    },
    Binary {
        length: u32,
    },
    VarBinary {
        length: u32,
    },
    Date,
    Time {
        precision: u8,
    },
    Timestamp {
        precision: u8,
    },
    TimestampLtz {
        precision: u8,
    },
    IntervalYearMonth(YearMonthInterval),
    IntervalDayTime(DayTimeInterval),
    Array(Box<DataType>),
    Multiset(Box<DataType>),
    Map {
        key: Box<DataType>,
        value: Box<DataType>,
    },
    Row(Vec<RowField>),
    /// An opaque value serialized to bytes; `class` names the Rust type when known.
    Raw {
        class: Option<String>,
        snapshot: Option<String>,
    },
    Null,
}

/// One named field of a ROW type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowField {
    pub name: String,
    pub data_type: DataType,
    pub description: Option<String>,
}

/// `INTERVAL YEAR(p)`, `INTERVAL YEAR(p) TO MONTH`, `INTERVAL MONTH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct YearMonthInterval {
    pub resolution: YearMonthResolution,
    /// Digits of the year field (1..=4); fixed at 2 where the year field is absent.
    pub year_precision: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum YearMonthResolution {
    Year,
    YearToMonth,
    Month,
}

/// `INTERVAL DAY(p1) TO SECOND(p2)` and the other day-time qualifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DayTimeInterval {
    pub resolution: DayTimeResolution,
    /// Digits of the day field (1..=6); fixed at 2 where the day field is absent.
    pub day_precision: u8,
    /// Fractional-second digits (0..=9); fixed at 6 where the second field is absent.
    pub fractional_precision: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DayTimeResolution {
    Day,
    DayToHour,
    DayToMinute,
    DayToSecond,
    Hour,
    HourToMinute,
    HourToSecond,
    Minute,
    MinuteToSecond,
    Second,
}

pub(crate) const DEFAULT_YEAR_PRECISION: u8 = 2;
pub(crate) const DEFAULT_DAY_PRECISION: u8 = 2;
pub(crate) const DEFAULT_FRACTIONAL_PRECISION: u8 = 6;

/// The root of a logical type, without parameters: what a compile-time check can compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TypeRoot {
    Boolean,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    Float,
    Double,
    Decimal,
    Char,
    VarChar,
    Binary,
    VarBinary,
    Date,
    Time,
    Timestamp,
    TimestampLtz,
    IntervalYearMonth,
    IntervalDayTime,
    Array,
    Multiset,
    Map,
    Row,
    Raw,
    Null,
}

/// A set of [`TypeRoot`]s, usable in constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RootSet(u32);

impl RootSet {
    pub const EMPTY: RootSet = RootSet(0);
    pub const ALL: RootSet = RootSet(u32::MAX);
    pub const CHARACTER: RootSet = RootSet::of(TypeRoot::Char).with(TypeRoot::VarChar);
    pub const BINARY: RootSet = RootSet::of(TypeRoot::Binary)
        .with(TypeRoot::VarBinary)
        .with(TypeRoot::Raw);

    pub const fn of(root: TypeRoot) -> RootSet {
        RootSet(1 << root as u8)
    }

    pub const fn with(self, root: TypeRoot) -> RootSet {
        RootSet(self.0 | 1 << root as u8)
    }

    pub const fn contains(self, root: TypeRoot) -> bool {
        self.0 & (1 << root as u8) != 0
    }
}

impl DataType {
    pub const fn new(kind: TypeKind, nullable: bool) -> Self {
        DataType { kind, nullable }
    }

    pub fn boolean() -> Self {
        TypeKind::Boolean.into()
    }
    pub fn tinyint() -> Self {
        TypeKind::TinyInt.into()
    }
    pub fn smallint() -> Self {
        TypeKind::SmallInt.into()
    }
    pub fn int() -> Self {
        TypeKind::Int.into()
    }
    pub fn bigint() -> Self {
        TypeKind::BigInt.into()
    }
    pub fn float() -> Self {
        TypeKind::Float.into()
    }
    pub fn double() -> Self {
        TypeKind::Double.into()
    }
    pub fn decimal(precision: u8, scale: u8) -> Self {
        TypeKind::Decimal { precision, scale }.into()
    }
    /// `STRING`, i.e. `VARCHAR(2147483647)`.
    pub fn string() -> Self {
        TypeKind::VarChar { length: MAX_LENGTH }.into()
    }
    /// `BYTES`, i.e. `VARBINARY(2147483647)`.
    pub fn bytes() -> Self {
        TypeKind::VarBinary { length: MAX_LENGTH }.into()
    }
    pub fn date() -> Self {
        TypeKind::Date.into()
    }
    pub fn time(precision: u8) -> Self {
        TypeKind::Time { precision }.into()
    }
    pub fn timestamp(precision: u8) -> Self {
        TypeKind::Timestamp { precision }.into()
    }
    pub fn timestamp_ltz(precision: u8) -> Self {
        TypeKind::TimestampLtz { precision }.into()
    }
    pub fn array(element: DataType) -> Self {
        TypeKind::Array(Box::new(element)).into()
    }
    pub fn map(key: DataType, value: DataType) -> Self {
        TypeKind::Map {
            key: Box::new(key),
            value: Box::new(value),
        }
        .into()
    }
    pub fn row(fields: impl IntoIterator<Item = RowField>) -> Self {
        TypeKind::Row(fields.into_iter().collect()).into()
    }
    pub fn raw(class: Option<&str>) -> Self {
        TypeKind::Raw {
            class: class.map(str::to_owned),
            snapshot: None,
        }
        .into()
    }
    pub fn null() -> Self {
        TypeKind::Null.into()
    }

    /// The same type without NULL.
    pub fn not_null(mut self) -> Self {
        self.nullable = false;
        self
    }

    /// The same type admitting NULL.
    pub fn nullable(mut self) -> Self {
        self.nullable = true;
        self
    }

    pub fn with_nullable(mut self, nullable: bool) -> Self {
        self.nullable = nullable;
        self
    }

    pub fn root(&self) -> TypeRoot {
        self.kind.root()
    }

    /// Equality that ignores nullability at every level.
    pub fn equals_ignoring_nullability(&self, other: &DataType) -> bool {
        self.kind.equals_ignoring_nullability(&other.kind)
    }
}

impl From<TypeKind> for DataType {
    /// A nullable type, as Flink's syntax means when `NOT NULL` is absent.
    fn from(kind: TypeKind) -> Self {
        DataType {
            kind,
            nullable: true,
        }
    }
}

impl TypeKind {
    pub fn root(&self) -> TypeRoot {
        match self {
            TypeKind::Boolean => TypeRoot::Boolean,
            TypeKind::TinyInt => TypeRoot::TinyInt,
            TypeKind::SmallInt => TypeRoot::SmallInt,
            TypeKind::Int => TypeRoot::Int,
            TypeKind::BigInt => TypeRoot::BigInt,
            TypeKind::Float => TypeRoot::Float,
            TypeKind::Double => TypeRoot::Double,
            TypeKind::Decimal { .. } => TypeRoot::Decimal,
            TypeKind::Char { .. } => TypeRoot::Char,
            TypeKind::VarChar { .. } => TypeRoot::VarChar,
            TypeKind::Binary { .. } => TypeRoot::Binary,
            TypeKind::VarBinary { .. } => TypeRoot::VarBinary,
            TypeKind::Date => TypeRoot::Date,
            TypeKind::Time { .. } => TypeRoot::Time,
            TypeKind::Timestamp { .. } => TypeRoot::Timestamp,
            TypeKind::TimestampLtz { .. } => TypeRoot::TimestampLtz,
            TypeKind::IntervalYearMonth(_) => TypeRoot::IntervalYearMonth,
            TypeKind::IntervalDayTime(_) => TypeRoot::IntervalDayTime,
            TypeKind::Array(_) => TypeRoot::Array,
            TypeKind::Multiset(_) => TypeRoot::Multiset,
            TypeKind::Map { .. } => TypeRoot::Map,
            TypeKind::Row(_) => TypeRoot::Row,
            TypeKind::Raw { .. } => TypeRoot::Raw,
            TypeKind::Null => TypeRoot::Null,
        }
    }

    fn equals_ignoring_nullability(&self, other: &TypeKind) -> bool {
        match (self, other) {
            (TypeKind::Array(a), TypeKind::Array(b))
            | (TypeKind::Multiset(a), TypeKind::Multiset(b)) => a.equals_ignoring_nullability(b),
            (TypeKind::Map { key: k1, value: v1 }, TypeKind::Map { key: k2, value: v2 }) => {
                k1.equals_ignoring_nullability(k2) && v1.equals_ignoring_nullability(v2)
            }
            (TypeKind::Row(a), TypeKind::Row(b)) => {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| {
                        x.name == y.name && x.data_type.equals_ignoring_nullability(&y.data_type)
                    })
            }
            (a, b) => a == b,
        }
    }
}

impl RowField {
    pub fn new(name: impl Into<String>, data_type: DataType) -> Self {
        RowField {
            name: name.into(),
            data_type,
            description: None,
        }
    }
}
