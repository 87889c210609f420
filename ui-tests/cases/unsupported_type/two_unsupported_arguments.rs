use udf_core::prelude::*;

// Two mistakes, two errors: one at each parameter.
#[scalar_function]
fn f(a: u32, b: i64, c: usize) -> i64 {
    a as i64 + b + c as i64
}

fn main() {}
