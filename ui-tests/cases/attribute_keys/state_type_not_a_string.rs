use udf_core::prelude::*;

#[derive(Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Count {
    n: i64,
}

#[ptf]
fn counter(
    #[state(type = ROW)] total: &mut Row,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    let _ = (total, input);
    out.collect(1);
}

fn main() {}
