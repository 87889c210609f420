use udf_core::prelude::*;

#[derive(Clone)]
struct Total;

#[aggregate_function]
impl Total {
    fn accumulate(acc: &mut i64, value: i64) {
        *acc += value;
    }
}

fn main() {}
