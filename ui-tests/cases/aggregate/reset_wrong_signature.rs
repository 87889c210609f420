use udf_core::prelude::*;

#[derive(Clone)]
struct Total;

#[aggregate_function]
impl Total {
    fn accumulate(acc: &mut i64, value: i64) {
        *acc += value;
    }

    fn reset(acc: &i64, to: i64) {
        let _ = (acc, to);
    }

    fn get_value(acc: &i64) -> i64 {
        *acc
    }
}

fn main() {}
