use udf_core::prelude::*;

#[scalar_function]
fn f(#[argument(typ = "INT")] a: i32) -> i32 {
    a
}

fn main() {}
