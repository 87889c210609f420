use udf_core::prelude::*;

#[async_table_function]
async fn visits(user: u128) -> Vec<String> {
    vec![user.to_string()]
}

fn main() {}
