use udf_core::prelude::*;

#[scalar_function(nmae = "g")]
fn f(a: i32) -> i32 {
    a
}

fn main() {}
