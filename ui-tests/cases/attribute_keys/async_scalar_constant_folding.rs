use udf_core::prelude::*;

#[async_scalar_function(constant_folding = false)]
async fn f(a: i32) -> i32 {
    a
}

fn main() {}
