use udf_core::prelude::*;

#[scalar_function]
#[varargs(true)]
fn f(a: &[i32]) -> i32 {
    a.len() as i32
}

fn main() {}
