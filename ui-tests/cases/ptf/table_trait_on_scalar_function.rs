use udf_core::prelude::*;

#[scalar_function]
fn twice(#[argument(set_semantic_table)] x: i32) -> i32 {
    x * 2
}

fn main() {}
