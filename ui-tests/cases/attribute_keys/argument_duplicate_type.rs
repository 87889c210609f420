use udf_core::prelude::*;

#[scalar_function]
fn f(#[argument(type = "INT", type = "INT")] a: i32) -> i32 {
    a
}

fn main() {}
