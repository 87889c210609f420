use udf_core::prelude::*;

#[async_scalar_function]
async fn started(user: &str) -> std::time::Instant {
    let _ = user;
    std::time::Instant::now()
}

fn main() {}
