use udf_core::prelude::*;

#[derive(SqlRow)]
struct Reading {
    #[data_type("INT")]
    sensor: String,
}

fn main() {}
