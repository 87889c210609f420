use udf_core::prelude::*;

#[derive(Clone)]
struct Total;

#[aggregate_function]
impl Total {
    #[data_type("BIGINT")]
    fn accumulate(acc: &mut i64, value: i64) {
        *acc += value;
    }

    fn get_value(acc: &i64) -> i64 {
        *acc
    }
}

fn main() {}
