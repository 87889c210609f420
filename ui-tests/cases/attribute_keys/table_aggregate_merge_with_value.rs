use udf_core::prelude::*;

#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Sum {
    total: i64,
}

#[derive(Clone, Default)]
struct Totals;

#[table_aggregate_function(merge = 1)]
impl Totals {
    fn accumulate(acc: &mut Sum, value: i64) {
        acc.total += value;
    }

    fn merge(acc: &mut Sum, other: &Sum) {
        acc.total += other.total;
    }

    fn emit_value(acc: &Sum, out: &mut Collector<i64>) {
        out.collect(acc.total);
    }
}

fn main() {}
