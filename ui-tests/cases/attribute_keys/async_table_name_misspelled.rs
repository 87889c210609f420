use udf_core::prelude::*;

#[async_table_function(naem = "g")]
async fn f(a: i32) -> Vec<i32> {
    vec![a]
}

fn main() {}
