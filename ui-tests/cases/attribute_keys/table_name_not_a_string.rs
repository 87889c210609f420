use udf_core::prelude::*;

#[table_function(name = split)]
fn f(a: i32, out: &mut Collector<i32>) {
    out.collect(a);
}

fn main() {}
