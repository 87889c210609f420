use udf_core::prelude::*;

#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Seen {
    first: String,
}

impl Seen {
    fn new() -> Self {
        Seen { first: String::new() }
    }
}

#[ptf]
fn second_event(
    #[state] seen: &mut Seen,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<String>,
) {
    let _ = (input, Seen::new());
    out.collect(seen.first.clone());
}

fn main() {}
