use udf_core::prelude::*;

#[scalar_function(constant_foldng = false)]
fn f(a: i32) -> i32 {
    a
}

fn main() {}
