use udf_core::prelude::*;

#[scalar_function]
fn f(#[argument(optinal)] a: Option<i32>) -> i32 {
    a.unwrap_or(0)
}

fn main() {}
