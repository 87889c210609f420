use udf_core::prelude::*;

#[scalar_function]
fn f(#[argument(type = "ARRAY<INT")] v: Vec<i32>) -> i32 {
    v.len() as i32
}

fn main() {}
