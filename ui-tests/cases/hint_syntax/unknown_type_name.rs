use udf_core::prelude::*;

#[scalar_function]
fn f(#[data_type("STIRNG")] s: &str) -> i32 {
    s.len() as i32
}

fn main() {}
