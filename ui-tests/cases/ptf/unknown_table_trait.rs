use udf_core::prelude::*;

#[ptf]
fn echo(#[argument(set_semantics_table)] input: Row, out: &mut Collector<String>) {
    out.collect(input.to_string());
}

fn main() {}
