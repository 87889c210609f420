use udf_core::prelude::*;

#[async_scalar_function(nane = "g")]
async fn f(a: i32) -> i32 {
    a
}

fn main() {}
