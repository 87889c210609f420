use udf_core::prelude::*;

#[derive(SqlRow)]
struct Pair(i32, i32);

fn main() {}
