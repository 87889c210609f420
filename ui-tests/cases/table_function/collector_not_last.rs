use udf_core::prelude::*;

#[table_function]
fn words(out: &mut Collector<String>, s: &str) {
    out.collect(s.to_owned());
}

fn main() {}
