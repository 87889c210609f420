use udf_core::prelude::*;

#[derive(SqlRow)]
struct Reading {
    #[data_type(5)]
    value: i64,
}

fn main() {}
