//! `WeightedAvg` from "Aggregate Functions": accumulate and retract, no merge.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

/// The mutable accumulator: a running weighted sum and total weight.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WeightedAvgAccumulator {
    pub sum: i64,
    pub count: i32,
}

/// The weighted average of `value` by `weight`, in integer arithmetic (like the Java
/// example); NULL when the weights sum to 0. Rows with a NULL argument are skipped.
#[derive(Clone, Debug, Default)]
pub struct WeightedAvg;

#[aggregate_function]
impl WeightedAvg {
    type Acc = WeightedAvgAccumulator;

    fn accumulate(acc: &mut Self::Acc, value: i64, weight: i32) {
        acc.sum = acc.sum.wrapping_add(value.wrapping_mul(weight as i64));
        acc.count = acc.count.wrapping_add(weight);
    }

    fn retract(acc: &mut Self::Acc, value: i64, weight: i32) {
        acc.sum = acc.sum.wrapping_sub(value.wrapping_mul(weight as i64));
        acc.count = acc.count.wrapping_sub(weight);
    }

    fn get_value(acc: &Self::Acc) -> Option<i64> {
        (acc.count != 0).then(|| acc.sum / acc.count as i64)
    }
}
