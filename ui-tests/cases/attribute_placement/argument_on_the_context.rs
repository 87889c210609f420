use udf_core::prelude::*;

#[derive(Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Count {
    n: i64,
}

#[ptf]
fn counter(
    #[argument(name = "c")] ctx: &mut Context,
    #[state] count: &mut Count,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    let _ = (ctx, input);
    count.n += 1;
    out.collect(count.n);
}

fn main() {}
