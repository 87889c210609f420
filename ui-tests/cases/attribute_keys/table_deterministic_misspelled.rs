use udf_core::prelude::*;

#[table_function(determinism = false)]
fn f(a: i32, out: &mut Collector<i32>) {
    out.collect(a);
}

fn main() {}
