use udf_core::prelude::*;

#[derive(Clone)]
struct Largest;

#[table_aggregate_function]
impl Largest {
    fn accumulate(acc: &mut i64, value: i64) {
        *acc = (*acc).max(value);
    }

    fn emit_value(acc: &i64) -> Vec<i64> {
        vec![*acc]
    }
}

fn main() {}
