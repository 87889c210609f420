use udf_core::prelude::*;

#[async_table_function]
async fn tours(user: &str) {
    let _ = user;
}

fn main() {}
