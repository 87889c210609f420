use udf_core::prelude::*;

#[scalar_function]
fn f(#[argument(name = "x", name = "y")] a: i32) -> i32 {
    a
}

fn main() {}
