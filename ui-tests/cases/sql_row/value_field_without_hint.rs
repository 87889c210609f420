use udf_core::prelude::*;

#[derive(SqlRow)]
struct Event {
    name: String,
    payload: Value,
}

fn main() {}
