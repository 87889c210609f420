use udf_core::prelude::*;

#[table_function]
#[data_type("INT")]
fn words(s: &str, out: &mut Collector<String>) {
    out.collect(s.to_owned());
}

fn main() {}
