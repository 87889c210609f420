use udf_core::prelude::*;

#[derive(SqlRow)]
#[data_type("ROW<value BIGINT>")]
struct Reading {
    value: i64,
}

fn main() {}
