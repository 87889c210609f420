//! `WeightedAverageFunction` from the API digest: with retract and merge.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WeightedAverageAccumulator {
    pub sum: f64,
    pub weight_sum: f64,
}

#[derive(Clone, Debug, Default)]
pub struct WeightedAverageFunction;

#[aggregate_function(name = "weighted_avg", retract, merge)]
impl WeightedAverageFunction {
    type Acc = WeightedAverageAccumulator;

    fn accumulate(acc: &mut Self::Acc, value: f64, weight: f64) {
        acc.sum += value * weight;
        acc.weight_sum += weight;
    }

    fn retract(acc: &mut Self::Acc, value: f64, weight: f64) {
        acc.sum -= value * weight;
        acc.weight_sum -= weight;
    }

    fn merge(acc: &mut Self::Acc, other: &Self::Acc) {
        acc.sum += other.sum;
        acc.weight_sum += other.weight_sum;
    }

    fn get_value(acc: &Self::Acc) -> Option<f64> {
        (acc.weight_sum != 0.0).then(|| acc.sum / acc.weight_sum)
    }
}
