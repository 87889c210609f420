//! `EfficientAggregateFunction` from "Best Practices": a small, reusable accumulator.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Acc {
    pub sum: f64,
    pub count: i64,
}

impl Acc {
    /// Clears the accumulator for reuse.
    pub fn reset(&mut self) {
        self.sum = 0.0;
        self.count = 0;
    }
}

/// The average of the non-NULL values; NULL for no values.
#[derive(Clone, Debug, Default)]
pub struct EfficientAggregateFunction;

#[aggregate_function(name = "efficient_avg")]
impl EfficientAggregateFunction {
    fn accumulate(acc: &mut Acc, value: f64) {
        acc.sum += value;
        acc.count += 1;
    }

    fn get_value(acc: &Acc) -> Option<f64> {
        (acc.count > 0).then(|| acc.sum / acc.count as f64)
    }
}
