use udf_core::prelude::*;

#[scalar_function]
fn f(a: i32) -> Value {
    Value::Int(a)
}

fn main() {}
