use udf_core::prelude::*;

#[ptf]
fn counter(
    #[state] count: &mut i64,
    #[argument(row_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    let _ = input;
    *count += 1;
    out.collect(*count);
}

fn main() {}
