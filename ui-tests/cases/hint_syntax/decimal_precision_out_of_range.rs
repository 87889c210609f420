use udf_core::prelude::*;

#[scalar_function]
#[data_type("DECIMAL(40, 2)")]
fn f(a: f64) -> Result<Decimal> {
    Decimal::from_f64(a)
}

fn main() {}
