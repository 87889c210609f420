use udf_core::prelude::*;

#[scalar_function]
fn f(#[argument(type = "INT")] #[data_type("BIGINT")] a: i64) -> i64 {
    a
}

fn main() {}
