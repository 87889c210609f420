use udf_core::prelude::*;

#[scalar_function]
fn f(a: u32) -> i64 {
    a as i64
}

fn main() {}
