use udf_core::prelude::*;

#[scalar_function]
fn f(#[data_type("STRING")] a: i32) -> i32 {
    a
}

fn main() {}
