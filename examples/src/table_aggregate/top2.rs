//! `Top2` from "Table Aggregate Functions": the two largest values of a group, with ranks.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

use super::Ranked;

/// The two largest values seen; `i32::MIN` stands for none, as in the Java example.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Top2Accumulator {
    pub first: i32,
    pub second: i32,
}

impl Default for Top2Accumulator {
    fn default() -> Self {
        Top2Accumulator {
            first: i32::MIN,
            second: i32::MIN,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Top2;

#[table_aggregate_function(merge)]
impl Top2 {
    fn accumulate(acc: &mut Top2Accumulator, value: i32) {
        if value > acc.first {
            acc.second = acc.first;
            acc.first = value;
        } else if value > acc.second {
            acc.second = value;
        }
    }

    fn merge(acc: &mut Top2Accumulator, other: &Top2Accumulator) {
        Self::accumulate(acc, other.first);
        Self::accumulate(acc, other.second);
    }

    /// Emits the value and rank of each of the (up to) two values.
    fn emit_value(acc: &Top2Accumulator, out: &mut Collector<Ranked>) {
        if acc.first != i32::MIN {
            out.collect(Ranked {
                value: acc.first,
                rank: 1,
            });
        }
        if acc.second != i32::MIN {
            out.collect(Ranked {
                value: acc.second,
                rank: 2,
            });
        }
    }
}
