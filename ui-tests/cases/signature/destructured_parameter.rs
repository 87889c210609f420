use udf_core::prelude::*;

#[scalar_function]
fn f((a, b): (i32, i32)) -> i32 {
    a + b
}

fn main() {}
