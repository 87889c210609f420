use udf_core::prelude::*;

#[scalar_function]
#[data_type("ROW<s STRING, t TIMESTMAP(3)>")]
fn f(i: i32) -> Row {
    Row::of([Value::Int(i)])
}

fn main() {}
