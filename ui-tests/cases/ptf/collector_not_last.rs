use udf_core::prelude::*;

#[ptf]
fn echo(
    out: &mut Collector<String>,
    #[argument(row_semantic_table)] input: Row,
) {
    out.collect(input.to_string());
}

fn main() {}
