//! Support for `#[derive(SqlRow)]`: a struct is a SQL `ROW` with one field per struct field.

mod fields;

use arrow::array::{Array, ArrayRef, StructArray};
use arrow::datatypes::{DataType as ArrowType, Fields};
use std::sync::Arc;

use crate::Error;
use crate::convert::{
    ArgReader, ArgValue, Inference, LazyNulls, Nulls, ResultValue, SqlType, ValueBuilder,
};
use crate::types::{DataType, RootSet, TypeKind};

pub use fields::{HintedRowField, SqlRowField};

/// A struct that stands for a SQL `ROW`; implemented by `#[derive(SqlRow)]`.
pub trait SqlRow: ResultValue + for<'a> ArgValue<'a> {
    /// The SQL field names, in order.
    const FIELD_NAMES: &'static [&'static str];
}

/// A Rust type that can be a field of a `#[derive(SqlRow)]` struct: readable, writable and
/// with a SQL type (one name for what generated row code needs).
pub trait RowFieldValue: Sized {
    type Reader<'a>: ArgReader<'a, Value = Self>;
    type Builder: ValueBuilder<Self>;
    const ROOTS: RootSet;
    const NULLABLE: bool;
    const STATIC_TYPE: bool;

    fn data_type(hint: Option<DataType>) -> DataType;
    fn reader(array: &dyn Array) -> Result<Self::Reader<'_>, Error>;
    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error>;
}

impl<T> RowFieldValue for T
where
    T: SqlType + ResultValue + for<'a> ArgValue<'a>,
{
    type Reader<'a> = <T as ArgValue<'a>>::Reader;
    type Builder = <T as ResultValue>::Builder;
    const ROOTS: RootSet = <T as SqlType>::ROOTS;
    const NULLABLE: bool = <T as SqlType>::NULLABLE;
    const STATIC_TYPE: bool = matches!(<T as SqlType>::INFERENCE, Inference::Static);

    fn data_type(hint: Option<DataType>) -> DataType {
        match hint {
            Some(hint) => hint.with_nullable(Self::NULLABLE),
            None => <T as SqlType>::data_type(),
        }
    }

    fn reader(array: &dyn Array) -> Result<Self::Reader<'_>, Error> {
        <T as ArgValue<'_>>::reader(array)
    }

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        <T as ResultValue>::builder(data_type, capacity)
    }
}

/// The compile-time check that `T` can be a field without a hint: its one error when not.
pub const fn row_field<T: SqlRowField>() {}

/// Const helpers for compile-time checks of field hints.
pub const fn field_roots<T: HintedRowField>() -> RootSet {
    <T as SqlType>::ROOTS
}

pub const fn field_nullable<T: HintedRowField>() -> bool {
    <T as SqlType>::NULLABLE
}

/// The columns of a struct array holding `fields` fields, or an error naming the Rust type.
pub fn struct_columns<'a>(
    array: &'a dyn Array,
    fields: usize,
    rust_type: &str,
) -> Result<&'a StructArray, Error> {
    let columns = array
        .as_any()
        .downcast_ref::<StructArray>()
        .ok_or_else(|| {
            Error::msg(format!(
                "cannot read Arrow {} values as `{rust_type}`",
                array.data_type()
            ))
        })?;
    if columns.num_columns() != fields {
        return Err(Error::msg(format!(
            "cannot read a ROW with {} fields as `{rust_type}`, which has {fields}",
            columns.num_columns()
        )));
    }
    Ok(columns)
}

/// Reads one field of a ROW into a struct field.
pub struct FieldReader<'a, T: RowFieldValue> {
    reader: T::Reader<'a>,
    nulls: Nulls<'a>,
    name: &'static str,
}

impl<'a, T: RowFieldValue> FieldReader<'a, T> {
    pub fn new(columns: &'a StructArray, index: usize, name: &'static str) -> Result<Self, Error> {
        let column = columns.column(index).as_ref();
        Ok(FieldReader {
            reader: T::reader(column).map_err(|e| Error::msg(format!("field `{name}`: {e}")))?,
            nulls: Nulls::of(column),
            name,
        })
    }

    #[inline(always)]
    pub fn get(&self, index: usize) -> Result<T, Error> {
        if !T::NULLABLE && self.nulls.is_null(index) {
            return Err(null_field::<T>(self.name));
        }
        self.reader.get(index)
    }
}

/// The error of a NULL in a field whose Rust type has no NULL (kept out of the row loop).
#[cold]
#[inline(never)]
fn null_field<T>(name: &str) -> Error {
    Error::msg(format!(
        "field `{name}` is NULL, which `{}` cannot represent; use `Option<_>`",
        std::any::type_name::<T>()
    ))
}

/// The SQL types of the fields of a ROW output type, checked against the struct.
pub fn row_field_types(
    data_type: &DataType,
    fields: usize,
    rust_type: &str,
) -> Result<Vec<DataType>, Error> {
    match &data_type.kind {
        TypeKind::Row(row) if row.len() == fields => {
            Ok(row.iter().map(|f| f.data_type.clone()).collect())
        }
        _ => Err(Error::msg(format!(
            "cannot write `{rust_type}` values as {data_type}"
        ))),
    }
}

/// The validity and Arrow fields of a struct result; the field builders live in the
/// generated builder.
pub struct StructParts {
    fields: Fields,
    rows: usize,
    nulls: LazyNulls,
}

impl StructParts {
    pub fn new(data_type: &DataType, capacity: usize) -> Self {
        let ArrowType::Struct(fields) = data_type.to_arrow() else {
            unreachable!("row_field_types checked that this is a ROW");
        };
        StructParts {
            fields,
            rows: 0,
            nulls: LazyNulls::new(capacity),
        }
    }

    #[inline(always)]
    pub fn append_valid(&mut self) {
        self.nulls.append_valid();
        self.rows += 1;
    }

    #[inline]
    pub fn append_null(&mut self) {
        self.nulls.append_null(self.rows);
        self.rows += 1;
    }

    pub fn finish(&mut self, columns: Vec<ArrayRef>) -> Result<ArrayRef, Error> {
        let len = std::mem::take(&mut self.rows);
        Ok(Arc::new(StructArray::try_new_with_length(
            self.fields.clone(),
            columns,
            self.nulls.finish(),
            len,
        )?))
    }
}

/// Builder of one struct field.
pub fn field_builder<T: RowFieldValue>(
    data_type: &DataType,
    capacity: usize,
    name: &str,
) -> Result<T::Builder, Error> {
    T::builder(data_type, capacity).map_err(|e| Error::msg(format!("field `{name}`: {e}")))
}
