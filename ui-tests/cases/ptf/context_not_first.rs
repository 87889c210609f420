use udf_core::prelude::*;

#[ptf]
fn counter(
    #[state] count: &mut i64,
    ctx: &mut Context,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    let _ = (input, ctx);
    *count += 1;
    out.collect(*count);
}

fn main() {}
