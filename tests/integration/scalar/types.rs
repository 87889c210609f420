//! Rule 1: SQL types come from Rust types; hints override. Every built-in mapping, through SQL.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use udf_core::prelude::*;
use udf_runtime::Session;

use crate::support::{column_types, error, rows};

#[derive(Clone, Debug, PartialEq, SqlRow)]
struct Word {
    text: String,
    #[data_type("SMALLINT")]
    length: i16,
    upper: Option<String>,
}

#[scalar_function]
fn describe(s: &str) -> Word {
    Word {
        text: s.to_owned(),
        length: s.chars().count() as i16,
        upper: (!s.is_empty()).then(|| s.to_uppercase()),
    }
}

#[scalar_function]
fn word_length(w: Word) -> i32 {
    w.length as i32 + w.upper.map_or(0, |_| 100)
}

#[scalar_function]
fn words(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_owned).collect()
}

#[scalar_function]
fn total(values: Vec<Option<i64>>) -> i64 {
    values.into_iter().flatten().sum()
}

#[scalar_function]
fn letter_counts(s: &str) -> BTreeMap<String, i32> {
    let mut counts = BTreeMap::new();
    for c in s.chars() {
        *counts.entry(c.to_string()).or_insert(0) += 1;
    }
    counts
}

#[scalar_function]
fn map_size(m: HashMap<String, i32>) -> i32 {
    m.values().sum()
}

#[scalar_function]
fn next_day(d: NaiveDate) -> NaiveDate {
    d.succ_opt().unwrap_or(d)
}

#[scalar_function]
fn add_hour(t: NaiveDateTime) -> NaiveDateTime {
    t + chrono::Duration::hours(1)
}

#[scalar_function]
#[data_type("TIMESTAMP_LTZ(3)")]
fn as_instant(t: NaiveDateTime) -> DateTime<Utc> {
    t.and_utc()
}

#[scalar_function]
fn noon_minus(t: NaiveTime) -> i64 {
    (NaiveTime::from_hms_opt(12, 0, 0).unwrap() - t).num_seconds()
}

#[scalar_function]
#[data_type("DECIMAL(10, 2)")]
fn with_tax(#[data_type("DECIMAL(10, 2)")] price: Decimal) -> Result<Decimal> {
    Ok(Decimal::new(price.unscaled() * 119, price.scale() + 2))
}

#[scalar_function]
fn flip(b: bool, bytes: &[u8]) -> Vec<u8> {
    bytes.iter().map(|x| if b { !x } else { *x }).collect()
}

#[scalar_function]
fn small_ints(a: i8, b: i16, c: f32) -> f64 {
    a as f64 + b as f64 + c as f64
}

fn session() -> Session {
    let session = Session::new();
    for f in [
        udf_core::UserFunction::into_function(describe),
        word_length.into_function(),
        words.into_function(),
        total.into_function(),
        letter_counts.into_function(),
        map_size.into_function(),
        next_day.into_function(),
        add_hour.into_function(),
        as_instant.into_function(),
        noon_minus.into_function(),
        with_tax.into_function(),
        flip.into_function(),
        small_ints.into_function(),
    ] {
        session.register(f).unwrap();
    }
    session
}

use udf_core::UserFunction;

#[tokio::test]
async fn rows_arrays_and_maps_round_trip() {
    let session = session();
    let result = rows(
        &session,
        "SELECT describe('héllo'), word_length(describe('héllo')), words('a bb c'), \
                total(make_array(CAST(1 AS BIGINT), NULL, 5)), letter_counts('abca'), map_size(letter_counts('abca'))",
    )
    .await;
    let counts = Value::Map(vec![
        (Value::from("a"), Value::Int(2)),
        (Value::from("b"), Value::Int(1)),
        (Value::from("c"), Value::Int(1)),
    ]);
    assert_eq!(
        result,
        vec![vec![
            Value::Row(Row::of([
                Value::from("héllo"),
                Value::SmallInt(5),
                Value::from("HÉLLO")
            ])),
            Value::Int(105),
            Value::Array(vec![Value::from("a"), Value::from("bb"), Value::from("c")]),
            Value::BigInt(6),
            counts,
            Value::Int(4),
        ]]
    );
}

#[tokio::test]
async fn dates_times_decimals_and_bytes() {
    let session = session();
    let result = rows(
        &session,
        "SELECT next_day(DATE '2024-02-28'), add_hour(TIMESTAMP '2024-01-01 23:30:00'), \
                as_instant(TIMESTAMP '2024-01-01 23:30:00.123456'), noon_minus(TIME '11:59:00'), \
                with_tax(CAST(10.00 AS DECIMAL(10, 2))), flip(true, X'00ff'), small_ints(CAST(1 AS TINYINT), CAST(2 AS SMALLINT), CAST(0.5 AS FLOAT))",
    )
    .await;
    let at = |s: &str| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").unwrap();
    assert_eq!(
        result,
        vec![vec![
            Value::Date(NaiveDate::from_ymd_opt(2024, 2, 29).unwrap()),
            Value::Timestamp(at("2024-01-02 00:30:00")),
            Value::TimestampLtz(at("2024-01-01 23:30:00.123").and_utc()),
            Value::BigInt(60),
            Value::Decimal("11.90".parse().unwrap()),
            Value::Bytes(vec![0xff, 0x00]),
            Value::Double(3.5),
        ]]
    );
}

#[tokio::test]
async fn result_types_are_declared_to_the_engine() {
    let session = session();
    let types = column_types(
        &session,
        "SELECT describe('x') AS w, as_instant(TIMESTAMP '2024-01-01 00:00:00') AS t, with_tax(CAST(1 AS DECIMAL(10, 2))) AS d",
    )
    .await;
    assert_eq!(
        types,
        [
            "ROW<text STRING NOT NULL, length SMALLINT NOT NULL, upper STRING> NOT NULL",
            "TIMESTAMP_LTZ(3) NOT NULL",
            "DECIMAL(10, 2) NOT NULL"
        ]
    );
}

#[tokio::test]
async fn a_null_where_the_rust_type_has_none_is_an_error() {
    let session = session();
    let message = error(&session, "SELECT word_length(named_struct('text', 'a', 'length', CAST(NULL AS SMALLINT), 'upper', 'A'))").await;
    assert!(
        message.contains("field `length` is NULL, which `i16` cannot represent"),
        "{message}"
    );
}

#[tokio::test]
async fn dictionary_encoded_strings_are_unpacked() {
    let session = session();
    let result = rows(
        &session,
        "SELECT words(arrow_cast(s, 'Dictionary(Int32, Utf8)')) FROM (VALUES ('a b'), ('c')) AS t(s)",
    )
    .await;
    assert_eq!(
        result,
        vec![
            vec![Value::Array(vec![Value::from("a"), Value::from("b")])],
            vec![Value::Array(vec![Value::from("c")])],
        ]
    );
}
