use udf_core::prelude::*;

// Two mistakes, two errors: one at each field.
#[derive(SqlRow)]
struct Reading {
    sensor: u16,
    value: Option<u64>,
    at: i64,
}

fn main() {}
