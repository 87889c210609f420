use udf_core::prelude::*;

#[scalar_function]
fn f(a: i32, #[argument(name = "A")] b: i32) -> i32 {
    a + b
}

fn main() {}
