use udf_core::prelude::*;

#[scalar_function]
#[argument(name = "x")]
fn f(a: i32) -> i32 {
    a
}

fn main() {}
