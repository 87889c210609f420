use udf_core::prelude::*;

#[scalar_function]
struct NotAFunction {
    a: i32,
}

fn main() {}
