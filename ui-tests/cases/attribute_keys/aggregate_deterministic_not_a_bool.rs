use udf_core::prelude::*;

#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Sum {
    total: i64,
}

#[derive(Clone, Default)]
struct Total;

#[aggregate_function(deterministic = "false")]
impl Total {
    fn accumulate(acc: &mut Sum, value: i64) {
        acc.total += value;
    }

    fn merge(acc: &mut Sum, other: &Sum) {
        acc.total += other.total;
    }

    fn get_value(acc: &Sum) -> i64 {
        acc.total
    }
}

fn main() {}
