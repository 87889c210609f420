use udf_core::prelude::*;

#[scalar_function]
fn log(message: &str) {
    println!("{message}");
}

fn main() {}
