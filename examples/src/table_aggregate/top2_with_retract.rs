//! `Top2WithRetract` from "Retraction Example": emits only what changed, retracting the
//! rows it replaces.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

use super::Ranked;

/// The current and the previous two largest values (`i32::MIN` = none).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Top2WithRetractAccumulator {
    pub first: i32,
    pub second: i32,
    pub old_first: i32,
    pub old_second: i32,
}

impl Default for Top2WithRetractAccumulator {
    fn default() -> Self {
        Top2WithRetractAccumulator {
            first: i32::MIN,
            second: i32::MIN,
            old_first: i32::MIN,
            old_second: i32::MIN,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Top2WithRetract;

#[table_aggregate_function]
impl Top2WithRetract {
    fn accumulate(acc: &mut Top2WithRetractAccumulator, v: i32) {
        acc.old_first = acc.first;
        acc.old_second = acc.second;
        if v > acc.first {
            acc.second = acc.first;
            acc.first = v;
        } else if v > acc.second {
            acc.second = v;
        }
    }

    fn emit_update_with_retract(
        acc: &Top2WithRetractAccumulator,
        out: &mut RetractableCollector<Ranked>,
    ) {
        if acc.first != acc.old_first {
            // An update: retract the old value, then emit the new one.
            if acc.old_first != i32::MIN {
                out.retract(Ranked {
                    value: acc.old_first,
                    rank: 1,
                });
            }
            out.collect(Ranked {
                value: acc.first,
                rank: 1,
            });
        }
        if acc.second != acc.old_second {
            if acc.old_second != i32::MIN {
                out.retract(Ranked {
                    value: acc.old_second,
                    rank: 2,
                });
            }
            out.collect(Ranked {
                value: acc.second,
                rank: 2,
            });
        }
    }
}
