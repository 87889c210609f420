//! What a field of a `#[derive(SqlRow)]` struct can be, named once, so that a field of
//! another type gives one error at the field, worded for the user.
//!
//! Each is a `RowFieldValue` (its supertraits are what that needs). The derive bounds each item it generates on its field types being [`SqlRowField`]s (or,
//! for a field with a `#[data_type]` hint, [`HintedRowField`]s). An unsupported field type
//! then fails that one bound — the same bound at the same place in every item, which rustc
//! reports once — and nothing inside the items is checked against it.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};

use crate::Decimal;
use crate::convert::{ArgValue, ResultValue, SqlType};
use crate::value::{Row, Value};

/// A type a SqlRow field with a `#[data_type]` hint can have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of a SqlRow struct",
    label = "unsupported field type",
    note = "fields can be bool, i8, i16, i32, i64, f32, f64, String, Vec<u8>, Decimal, chrono's NaiveDate, NaiveTime, NaiveDateTime and DateTime<Utc>, Option<T>, Vec<T>, HashMap<K, V>, BTreeMap<K, V>, #[derive(SqlRow)] structs, and Value or Row",
    note = "Flink SQL has no unsigned integers: use i8, i16, i32 or i64"
)]
pub trait HintedRowField: SqlType + ResultValue + for<'a> ArgValue<'a> {}

/// A type a SqlRow field can have without a hint: one with a SQL type of its own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of a SqlRow struct",
    label = "unsupported field type",
    note = "fields can be bool, i8, i16, i32, i64, f32, f64, String, Vec<u8>, Decimal, chrono's NaiveDate, NaiveTime, NaiveDateTime and DateTime<Utc>, Option<T>, Vec<T>, HashMap<K, V>, BTreeMap<K, V> and #[derive(SqlRow)] structs",
    note = "Value and Row have no SQL type of their own: give such a field #[data_type(\"...\")]",
    note = "Flink SQL has no unsigned integers: use i8, i16, i32 or i64"
)]
pub trait SqlRowField: HintedRowField {}

macro_rules! row_fields {
    ($($ty:ty),*) => {$(
        impl HintedRowField for $ty {}
        impl SqlRowField for $ty {}
    )*};
}

row_fields!(
    bool,
    i8,
    i16,
    i32,
    i64,
    f32,
    f64,
    String,
    Vec<u8>,
    Decimal,
    NaiveDate,
    NaiveTime,
    NaiveDateTime,
    DateTime<Utc>
);

impl HintedRowField for Value {}
impl HintedRowField for Row {}

impl<T: HintedRowField> HintedRowField for Option<T> {}
impl<T: SqlRowField> SqlRowField for Option<T> {}

// A collection has a SQL type of its own whatever its elements are (an element type without
// one takes the collection's hint, when there is one).
impl<T: HintedRowField> HintedRowField for Vec<T> {}
impl<T: HintedRowField> SqlRowField for Vec<T> {}

impl<K: HintedRowField + Hash + Eq, V: HintedRowField> HintedRowField for HashMap<K, V> {}
impl<K: HintedRowField + Hash + Eq, V: HintedRowField> SqlRowField for HashMap<K, V> {}

impl<K: HintedRowField + Ord, V: HintedRowField> HintedRowField for BTreeMap<K, V> {}
impl<K: HintedRowField + Ord, V: HintedRowField> SqlRowField for BTreeMap<K, V> {}
