use udf_core::prelude::*;

#[scalar_function]
#[varargs]
fn total(#[argument(optional)] values: &[Option<i64>]) -> i64 {
    values.iter().flatten().sum()
}

fn main() {}
