use udf_core::prelude::*;

#[table_function]
fn words(s: &str, out: &mut Collector<String>) -> usize {
    out.collect(s.to_owned());
    1
}

fn main() {}
