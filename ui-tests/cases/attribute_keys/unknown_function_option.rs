use udf_core::prelude::*;

#[scalar_function(determinstic = false)]
fn f(a: i32) -> i32 {
    a
}

fn main() {}
