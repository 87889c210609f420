use udf_core::prelude::*;

#[scalar_function]
fn identity<T: Copy>(a: T) -> T {
    a
}

fn main() {}
