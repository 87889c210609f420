//! `over_rows_2_preceding`: a bounded OVER frame calls `retract`. The cases' `WAvg`.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

use super::{check, load, on_a_cluster, session};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct WAcc {
    pub(super) sum: i64,
    pub(super) count: i64,
}

/// Weighted average with integer division, with retract and merge.
#[derive(Clone, Debug, Default)]
pub(super) struct WAvg;

#[aggregate_function(name = "WAvg", retract, merge)]
impl WAvg {
    fn accumulate(acc: &mut WAcc, value: Option<i64>, weight: Option<i64>) {
        if let (Some(value), Some(weight)) = (value, weight) {
            acc.sum += value * weight;
            acc.count += weight;
        }
    }

    fn retract(acc: &mut WAcc, value: Option<i64>, weight: Option<i64>) {
        if let (Some(value), Some(weight)) = (value, weight) {
            acc.sum -= value * weight;
            acc.count -= weight;
        }
    }

    fn merge(acc: &mut WAcc, other: &WAcc) {
        acc.sum += other.sum;
        acc.count += other.count;
    }

    fn get_value(acc: &WAcc) -> Option<i64> {
        (acc.count != 0).then(|| acc.sum / acc.count)
    }
}

#[tokio::test]
async fn over_rows_2_preceding() {
    let case = load("over_rows_2_preceding");
    let session = session(&case);
    session.register(WAvg).unwrap();
    check(&case, &session).await;
    check(&case, &on_a_cluster(&case, 2, |s| s.register(WAvg)).await).await;
}
