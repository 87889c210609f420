use udf_core::prelude::*;

#[scalar_function]
#[varargs]
fn total(values: Vec<i64>) -> i64 {
    values.iter().sum()
}

fn main() {}
