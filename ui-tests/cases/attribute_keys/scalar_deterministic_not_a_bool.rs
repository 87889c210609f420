use udf_core::prelude::*;

#[scalar_function(deterministic = "no")]
fn f(a: i32) -> i32 {
    a
}

fn main() {}
