use udf_core::prelude::*;

#[async_table_function]
async fn visits(user: &str) -> Result<Vec<std::time::Instant>> {
    let _ = user;
    Ok(Vec::new())
}

fn main() {}
