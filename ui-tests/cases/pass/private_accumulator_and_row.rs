//! A public aggregate and table aggregate whose accumulator and row types are private to
//! their module.
use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Sum {
    total: i64,
}

#[derive(Clone, Debug, Default)]
pub struct Total;

#[aggregate_function]
impl Total {
    fn accumulate(acc: &mut Sum, value: i64) {
        acc.total += value;
    }

    fn get_value(acc: &Sum) -> i64 {
        acc.total
    }
}

#[derive(Clone, Debug, SqlRow)]
struct Ranked {
    value: i32,
    rank: i32,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Best {
    first: Option<i32>,
}

#[derive(Clone, Debug, Default)]
pub struct Top1;

#[table_aggregate_function]
impl Top1 {
    fn accumulate(acc: &mut Best, value: i32) {
        acc.first = acc.first.max(Some(value));
    }

    fn emit_value(acc: &Best, out: &mut Collector<Ranked>) {
        if let Some(value) = acc.first {
            out.collect(Ranked { value, rank: 1 });
        }
    }
}

fn main() {
    let _ = (
        udf_core::UserFunction::into_function(Total),
        udf_core::UserFunction::into_function(Top1),
    );
}
