use udf_core::prelude::*;

#[ptf]
fn counter(
    count: &mut i64,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    let _ = input;
    *count += 1;
    out.collect(*count);
}

fn main() {}
