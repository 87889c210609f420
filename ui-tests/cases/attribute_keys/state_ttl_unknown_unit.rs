use udf_core::prelude::*;

#[derive(Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Count {
    n: i64,
}

#[ptf]
fn counter(
    #[state(ttl = "5 fortnights")] count: &mut Count,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    count.n += 1;
    let _ = input;
    out.collect(count.n);
}

fn main() {}
