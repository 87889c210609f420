use udf_core::prelude::*;

#[derive(Clone, Debug, SqlRow)]
struct Ranked {
    value: i64,
    rank: i32,
}

#[derive(Clone)]
struct Top;

#[table_aggregate_function]
impl Top {
    fn accumulate(acc: &mut i64, value: i64) {
        *acc = (*acc).max(value);
    }

    fn reset(acc: &mut i64) {
        *acc = 0;
    }

    fn emit_value(acc: &i64, out: &mut Collector<Ranked>) {
        out.collect(Ranked { value: *acc, rank: 1 });
    }
}

fn main() {}
