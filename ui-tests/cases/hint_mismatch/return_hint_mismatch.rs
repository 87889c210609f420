use udf_core::prelude::*;

#[scalar_function]
#[data_type("DECIMAL(12, 3)")]
fn f(a: f64) -> f64 {
    a
}

fn main() {}
