use udf_core::prelude::*;

#[derive(Clone, Default, PartialEq)]
struct Seen {
    first: String,
}

#[ptf]
fn second_event(
    #[state] seen: &mut Seen,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<String>,
) {
    let _ = input;
    out.collect(seen.first.clone());
}

fn main() {}
