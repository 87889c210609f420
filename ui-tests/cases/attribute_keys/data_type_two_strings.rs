use udf_core::prelude::*;

#[scalar_function]
#[data_type("INT", "BIGINT")]
fn f(a: i32) -> i32 {
    a
}

fn main() {}
