use udf_core::prelude::*;

#[ptf]
fn counter(
    #[argument(set_semantic_table)] input: Row,
    #[state] count: &mut i64,
    out: &mut Collector<i64>,
) {
    let _ = input;
    *count += 1;
    out.collect(*count);
}

fn main() {}
