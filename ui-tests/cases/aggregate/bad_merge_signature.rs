use udf_core::prelude::*;

#[derive(Clone)]
struct Total;

#[aggregate_function]
impl Total {
    fn accumulate(acc: &mut i64, value: i64) {
        *acc += value;
    }

    fn merge(acc: &mut i64, others: Vec<i64>) {
        *acc += others.iter().sum::<i64>();
    }

    fn get_value(acc: &i64) -> i64 {
        *acc
    }
}

fn main() {}
