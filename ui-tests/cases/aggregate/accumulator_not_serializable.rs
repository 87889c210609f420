use udf_core::prelude::*;

#[derive(Clone, Default)]
struct Sum {
    total: i64,
}

#[derive(Clone)]
struct Total;

#[aggregate_function]
impl Total {
    fn accumulate(acc: &mut Sum, value: i64) {
        acc.total += value;
    }

    fn get_value(acc: &Sum) -> i64 {
        acc.total
    }
}

fn main() {}
