use udf_core::prelude::*;

#[derive(Clone)]
struct Total;

#[table_aggregate_function]
impl Total {
    fn accumulate(acc: &mut i64, value: i64) {
        *acc += value;
    }

    fn retract(acc: &mut i64, value: i64) {
        *acc -= value;
    }

    fn emit_value(acc: &i64, out: &mut Collector<i64>) {
        out.collect(*acc);
    }
}

fn main() {}
