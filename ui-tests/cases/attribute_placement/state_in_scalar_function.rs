use udf_core::prelude::*;

#[scalar_function]
fn f(#[state] count: &mut i64, a: i64) -> i64 {
    *count += a;
    *count
}

fn main() {}
