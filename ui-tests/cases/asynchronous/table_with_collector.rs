use udf_core::prelude::*;

#[async_table_function]
async fn tours(user: &str, out: &mut Collector<String>) -> Vec<String> {
    vec![user.to_owned()]
}

fn main() {}
