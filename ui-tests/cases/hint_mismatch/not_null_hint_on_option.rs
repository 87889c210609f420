use udf_core::prelude::*;

#[scalar_function]
fn f(#[argument(type = "INT NOT NULL")] a: Option<i32>) -> i32 {
    a.unwrap_or(0)
}

fn main() {}
