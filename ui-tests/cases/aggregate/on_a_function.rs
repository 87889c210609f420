use udf_core::prelude::*;

#[aggregate_function]
fn total(values: &[i64]) -> i64 {
    values.iter().sum()
}

fn main() {}
