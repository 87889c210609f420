use udf_core::prelude::*;

#[table_function]
fn words(s: &str) {
    let _ = s;
}

fn main() {}
