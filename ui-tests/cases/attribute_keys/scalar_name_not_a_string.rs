use udf_core::prelude::*;

#[scalar_function(name = 5)]
fn f(a: i32) -> i32 {
    a
}

fn main() {}
