use udf_core::prelude::*;

#[async_scalar_function]
fn lookup(id: i32) -> String {
    id.to_string()
}

fn main() {}
