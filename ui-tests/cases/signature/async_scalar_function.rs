use udf_core::prelude::*;

#[scalar_function]
async fn lookup(id: i32) -> String {
    id.to_string()
}

fn main() {}
