//! `reset`: over input sorted by the group keys, groups are emitted as soon as they are
//! complete, and their accumulators are reset and reused by the groups that follow.

use std::sync::atomic::{AtomicUsize, Ordering};

use udf_core::Value;
use udf_core::prelude::*;
use udf_runtime::Session;

use crate::support::{explain, rows};

static RESETS: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Values {
    values: Vec<i64>,
}

/// A sum whose `reset` counts its calls.
#[derive(Clone, Default)]
struct CountedResetSum;

#[aggregate_function]
impl CountedResetSum {
    fn accumulate(acc: &mut Values, value: i64) {
        acc.values.push(value);
    }

    /// Keeps the allocation, which is what reuse is for.
    fn reset(acc: &mut Values) {
        RESETS.fetch_add(1, Ordering::SeqCst);
        acc.values.clear();
    }

    fn get_value(acc: &Values) -> i64 {
        acc.values.iter().sum()
    }
}

/// `sorted(k, v)`: keys 1 1 2 | 2 3 3 | 4 4 5, values 1 to 9.
fn sorted_session() -> Session {
    let values = std::array::from_fn(|i| Value::BigInt(i as i64 + 1));
    let session = super::sorted_session([1, 1, 2, 2, 3, 3, 4, 4, 5], values);
    session.register(CountedResetSum).unwrap();
    session
}

#[tokio::test]
async fn groups_emitted_early_reuse_reset_accumulators() {
    let session = sorted_session();
    let sql = "SELECT k, countedresetsum(v) FROM sorted GROUP BY k";
    let plan = explain(&session, sql).await;
    assert!(plan.contains("ordering_mode=Sorted"), "{plan}");
    let before = RESETS.load(Ordering::SeqCst);
    let mut result = rows(&session, sql).await;
    result.sort_by_key(|row| match row[0] {
        Value::BigInt(k) => k,
        _ => panic!("key {:?}", row[0]),
    });
    // k=1: 1+2, k=2: 3+4, k=3: 5+6, k=4: 7+8, k=5: 9 — the same as with fresh accumulators.
    let expected: Vec<Vec<Value>> = [(1, 3), (2, 7), (3, 11), (4, 15), (5, 9)]
        .into_iter()
        .map(|(k, sum)| vec![Value::BigInt(k), Value::BigInt(sum)])
        .collect();
    assert_eq!(result, expected);
    assert!(
        RESETS.load(Ordering::SeqCst) > before,
        "no accumulator was reset"
    );
}
