use udf_core::prelude::*;

#[async_scalar_function]
struct Lookup;

fn main() {}
