use udf_core::prelude::*;

#[scalar_function]
#[varargs]
fn total(values: &[u16]) -> i64 {
    values.iter().map(|v| *v as i64).sum()
}

fn main() {}
