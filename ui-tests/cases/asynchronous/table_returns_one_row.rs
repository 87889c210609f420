use udf_core::prelude::*;

#[async_table_function]
async fn tours(user: &str) -> String {
    user.to_owned()
}

fn main() {}
