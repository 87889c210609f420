use udf_core::prelude::*;

#[derive(SqlRow)]
struct Reading {
    #[data_type("BIGINT")]
    #[data_type("BIGINT")]
    value: i64,
}

fn main() {}
