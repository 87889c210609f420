use udf_core::prelude::*;

#[async_scalar_function]
async fn since(started: std::time::Instant) -> i64 {
    started.elapsed().as_millis() as i64
}

fn main() {}
