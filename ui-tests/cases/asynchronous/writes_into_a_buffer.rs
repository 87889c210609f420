use udf_core::prelude::*;

#[async_scalar_function]
async fn lookup(id: i32, out: &mut String) {
    out.push_str(&id.to_string());
}

fn main() {}
