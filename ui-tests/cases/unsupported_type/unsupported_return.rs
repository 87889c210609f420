use udf_core::prelude::*;

#[scalar_function]
fn f(a: i32) -> std::time::Instant {
    let _ = a;
    std::time::Instant::now()
}

fn main() {}
