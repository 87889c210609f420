use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
struct Seen {
    n: i64,
}

#[ptf]
fn forever(
    #[state(ttl = "999999999999999 d")] seen: &mut Seen,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    let _ = input;
    seen.n += 1;
    out.collect(seen.n);
}

fn main() {}
