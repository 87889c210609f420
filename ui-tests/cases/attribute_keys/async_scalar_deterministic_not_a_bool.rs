use udf_core::prelude::*;

#[async_scalar_function(deterministic = 0)]
async fn f(a: i32) -> i32 {
    a
}

fn main() {}
