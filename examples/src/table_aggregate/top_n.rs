//! `TopNFunction` from the API digest: the `n` largest scores with their rank; `n` is fixed
//! when the instance is created.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

/// A score and its rank (the digest emits `Row.of(score, rank)`).
#[derive(Clone, Debug, PartialEq, SqlRow)]
pub struct Scored {
    pub score: f64,
    pub rank: i32,
}

/// The largest values so far, in descending order.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TopNAccumulator {
    pub top_values: Vec<f64>,
}

#[derive(Clone, Debug)]
pub struct TopNFunction {
    pub n: usize,
}

#[table_aggregate_function(name = "top_n")]
impl TopNFunction {
    /// Keeps the largest `n` values.
    fn accumulate(&self, acc: &mut TopNAccumulator, value: f64) {
        let at = acc.top_values.partition_point(|v| *v >= value);
        acc.top_values.insert(at, value);
        acc.top_values.truncate(self.n);
    }

    fn emit_value(acc: &TopNAccumulator, out: &mut Collector<Scored>) {
        for (i, score) in acc.top_values.iter().enumerate() {
            out.collect(Scored {
                score: *score,
                rank: i as i32 + 1,
            });
        }
    }
}
