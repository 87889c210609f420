use udf_core::prelude::*;

#[ptf]
struct Counter {
    n: i64,
}

fn main() {}
