use udf_core::prelude::*;

#[scalar_function]
fn f(#[varargs] values: &[i32]) -> i32 {
    values.iter().sum()
}

fn main() {}
