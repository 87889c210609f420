use udf_core::prelude::*;

#[table_function]
fn f(#[state] seen: &mut i64, a: i32, out: &mut Collector<i32>) {
    out.collect(a);
}

fn main() {}
