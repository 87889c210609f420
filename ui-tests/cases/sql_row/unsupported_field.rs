use udf_core::prelude::*;

#[derive(SqlRow)]
struct Reading {
    sensor: String,
    value: u64,
}

fn main() {}
