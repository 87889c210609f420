//! Rust ↔ SQL ↔ Arrow conversion, driven by traits.
//!
//! - [`SqlType`]: the SQL type a Rust type stands for (and what hints it can take).
//! - [`ArgValue`]: reading a parameter's values out of an Arrow array.
//! - [`ResultValue`]: writing results into an Arrow array.
//! - [`FunctionReturn`]: the return kinds `T`, `Option<T>`, `Result<T>`, `Result<Option<T>>`.
//!
//! Generated code reaches these traits only through the helpers in `__private`, so a type
//! without a mapping produces one error, worded by `#[diagnostic::on_unimplemented]`, at
//! the user's type.

mod decimal;
mod dynamic;
mod lazy_nulls;
mod nested;
mod output;
mod primitive;
mod temporal;
mod text;

use arrow::array::{Array, ArrayRef};

use crate::Error;
use crate::types::{DataType, RootSet};

pub use dynamic::{array_value, values_to_array};
pub use lazy_nulls::LazyNulls;
pub use nested::{ListReader, MapReader};
pub use output::{FunctionReturn, WriterReturn};
pub use primitive::PrimitiveValue;
pub use text::{BinaryReader, BytesBuilder, StrBuilder, StrReader};

/// How a Rust type determines its SQL type when no hint is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inference {
    /// [`SqlType::data_type`] is the type.
    Static,
    /// Accepts an argument of any type (`Value`); as a result it needs a hint.
    Any,
    /// Accepts an argument of any ROW type (`Row`); as a result it needs a hint.
    AnyRow,
}

/// The SQL type of a Rust type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no SQL type",
    label = "no SQL type for this Rust type",
    note = "SQL types exist for bool, i8, i16, i32, i64, f32, f64, &str, String, &[u8], Vec<u8>, Decimal, chrono's NaiveDate, NaiveTime, NaiveDateTime and DateTime<Utc>, Option<T>, Vec<T>, HashMap<K, V>, BTreeMap<K, V>, Value, Row and #[derive(SqlRow)] structs"
)]
pub trait SqlType {
    /// The SQL type roots a value of this Rust type can be read from or written to; a
    /// `#[data_type]` hint outside this set is a compile error.
    const ROOTS: RootSet;
    /// `true` for `Option<T>`: the function sees NULL instead of being skipped.
    const NULLABLE: bool = false;
    const INFERENCE: Inference = Inference::Static;

    /// The SQL type without a hint. For [`Inference::Any`]/[`Inference::AnyRow`] types this
    /// is a placeholder; the macros demand a hint where it would be used.
    fn data_type() -> DataType;
}

/// A Rust type a function can take as a parameter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a UDF argument",
    label = "unsupported argument type",
    note = "arguments can be bool, i8, i16, i32, i64, f32, f64, &str, String, &[u8], Vec<u8>, Decimal, chrono's NaiveDate, NaiveTime, NaiveDateTime and DateTime<Utc>, Option<T>, Vec<T>, HashMap<K, V>, BTreeMap<K, V>, Value (any type), Row and #[derive(SqlRow)] structs",
    note = "Flink SQL has no unsigned integers: use i8, i16, i32 or i64"
)]
pub trait ArgValue<'a>: SqlType + Sized {
    /// (`Send + Sync`: async functions keep readers across awaits.)
    type Reader: ArgReader<'a, Value = Self> + Send + Sync;

    /// A reader over `array`; an error if the array's Arrow type cannot hold this type.
    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error>;
}

/// Reads values of one column.
pub trait ArgReader<'a> {
    type Value;

    /// The value at `index`. For a non-`Option` type the caller has checked that the slot
    /// is valid; nested NULLs where the type has no room for them are errors.
    fn get(&self, index: usize) -> Result<Self::Value, Error>;
}

/// A Rust type a function can return (or emit, or store as a field of a result).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a UDF",
    label = "unsupported result type",
    note = "results can be bool, i8, i16, i32, i64, f32, f64, &str, String, &[u8], Vec<u8>, Decimal, chrono's NaiveDate, NaiveTime, NaiveDateTime and DateTime<Utc>, Option<T>, Vec<T>, HashMap<K, V>, BTreeMap<K, V>, and #[derive(SqlRow)] structs; Value and Row with a #[data_type] hint",
    note = "Flink SQL has no unsigned integers: use i8, i16, i32 or i64"
)]
pub trait ResultValue: SqlType + Sized + Send {
    /// (`Send`: async functions keep builders across awaits.)
    type Builder: ValueBuilder<Self> + Send;

    /// A builder for `capacity` values of the SQL type `data_type` (the declared or
    /// inferred output type, which this Rust type accepts).
    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error>;
}

/// Accumulates values into an Arrow array.
pub trait ValueBuilder<T> {
    fn append(&mut self, value: T) -> Result<(), Error>;
    fn append_null(&mut self);
    fn finish(&mut self) -> Result<ArrayRef, Error>;
}

/// Error for an Arrow array that does not hold what a reader expects.
pub(crate) fn unexpected_array<T: ?Sized>(array: &dyn Array) -> Error {
    Error::msg(format!(
        "cannot read Arrow {} values as `{}`",
        array.data_type(),
        std::any::type_name::<T>()
    ))
}

/// Error for an output type a builder cannot write.
pub(crate) fn unexpected_type<T: ?Sized>(data_type: &DataType) -> Error {
    Error::msg(format!(
        "cannot write `{}` values as {data_type}",
        std::any::type_name::<T>()
    ))
}

pub(crate) fn downcast<A: 'static, T: ?Sized>(array: &dyn Array) -> Result<&A, Error> {
    array
        .as_any()
        .downcast_ref::<A>()
        .ok_or_else(|| unexpected_array::<T>(array))
}

/// The validity of an array, for readers that must see NULL slots.
pub(crate) struct Nulls<'a>(Option<&'a arrow::buffer::NullBuffer>);

impl<'a> Nulls<'a> {
    /// A column's NULLs; none to look at when it has a bitmap but no NULL in it.
    pub(crate) fn of(array: &'a dyn Array) -> Self {
        Nulls(array.nulls().filter(|nulls| nulls.null_count() > 0))
    }

    #[inline]
    pub(crate) fn is_null(&self, index: usize) -> bool {
        self.0.is_some_and(|n| n.is_null(index))
    }
}

/// `Option<T>`: the function is called for NULL too, and sees `None`.
impl<T: SqlType> SqlType for Option<T> {
    const ROOTS: RootSet = T::ROOTS;
    const NULLABLE: bool = true;
    const INFERENCE: Inference = T::INFERENCE;

    fn data_type() -> DataType {
        T::data_type().nullable()
    }
}

pub struct OptionReader<'a, R> {
    nulls: Nulls<'a>,
    inner: R,
}

impl<'a, T: ArgValue<'a>> ArgValue<'a> for Option<T> {
    type Reader = OptionReader<'a, T::Reader>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        Ok(OptionReader {
            nulls: Nulls::of(array),
            inner: T::reader(array)?,
        })
    }
}

impl<'a, R: ArgReader<'a>> ArgReader<'a> for OptionReader<'a, R> {
    type Value = Option<R::Value>;

    #[inline]
    fn get(&self, index: usize) -> Result<Self::Value, Error> {
        if self.nulls.is_null(index) {
            Ok(None)
        } else {
            self.inner.get(index).map(Some)
        }
    }
}

pub struct OptionBuilder<B>(B);

impl<T: ResultValue> ResultValue for Option<T> {
    type Builder = OptionBuilder<T::Builder>;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        T::builder(data_type, capacity).map(OptionBuilder)
    }
}

impl<T, B: ValueBuilder<T>> ValueBuilder<Option<T>> for OptionBuilder<B> {
    #[inline]
    fn append(&mut self, value: Option<T>) -> Result<(), Error> {
        match value {
            Some(v) => self.0.append(v),
            None => {
                self.0.append_null();
                Ok(())
            }
        }
    }

    fn append_null(&mut self) {
        self.0.append_null()
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        self.0.finish()
    }
}
