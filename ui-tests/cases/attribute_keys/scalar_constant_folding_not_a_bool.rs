use udf_core::prelude::*;

#[scalar_function(constant_folding = 1)]
fn f(a: i32) -> i32 {
    a
}

fn main() {}
