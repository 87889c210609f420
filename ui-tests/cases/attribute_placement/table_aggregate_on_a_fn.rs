use udf_core::prelude::*;

#[table_aggregate_function]
fn top(value: i64) -> i64 {
    value
}

fn main() {}
