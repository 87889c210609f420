use udf_core::prelude::*;

#[derive(Clone)]
struct Total;

#[aggregate_function]
impl Total {
    type Acc = i64;

    fn get_value(acc: &i64) -> i64 {
        *acc
    }
}

fn main() {}
