use udf_core::prelude::*;

#[scalar_function]
#[data_type(value = "INT")]
fn f(a: i32) -> i32 {
    a
}

fn main() {}
