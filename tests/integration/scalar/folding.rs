//! Rule 5: deterministic calls with constant arguments may run once at planning time;
//! `deterministic = false` runs per row; `constant_folding = false` is never folded.

use std::sync::atomic::{AtomicUsize, Ordering};

use udf_core::prelude::*;
use udf_runtime::Session;

use crate::support::{explain, rows};

static FOLDED_CALLS: AtomicUsize = AtomicUsize::new(0);
static RANDOM_CALLS: AtomicUsize = AtomicUsize::new(0);
static SIDE_EFFECT_CALLS: AtomicUsize = AtomicUsize::new(0);

#[scalar_function]
fn plus_one(x: i64) -> i64 {
    FOLDED_CALLS.fetch_add(1, Ordering::SeqCst);
    x + 1
}

#[scalar_function(deterministic = false)]
fn noisy_plus_one(x: i64) -> i64 {
    RANDOM_CALLS.fetch_add(1, Ordering::SeqCst);
    x + 1
}

#[scalar_function(constant_folding = false)]
fn logged_plus_one(x: i64) -> i64 {
    SIDE_EFFECT_CALLS.fetch_add(1, Ordering::SeqCst);
    x + 1
}

const THREE_ROWS: &str = "FROM (VALUES (1), (2), (3)) AS t(v)";

#[tokio::test]
async fn deterministic_constant_calls_are_evaluated_once_while_planning() {
    let session = Session::new();
    session.register(plus_one).unwrap();
    let before = FOLDED_CALLS.load(Ordering::SeqCst);
    let result = rows(&session, &format!("SELECT plus_one(10) {THREE_ROWS}")).await;
    assert_eq!(result.len(), 3);
    assert!(result.iter().all(|r| r[0] == udf_core::Value::BigInt(11)));
    assert_eq!(FOLDED_CALLS.load(Ordering::SeqCst) - before, 1);
    let plan = explain(&session, &format!("SELECT plus_one(10) {THREE_ROWS}")).await;
    assert!(
        plan.contains("Projection: Int64(11) AS plus_one(Int64(10))"),
        "folded into a literal:\n{plan}"
    );
}

#[tokio::test]
async fn non_deterministic_and_unfoldable_calls_run_per_row() {
    let session = Session::new();
    session.register(noisy_plus_one).unwrap();
    session.register(logged_plus_one).unwrap();
    let (random, side_effect) = (
        RANDOM_CALLS.load(Ordering::SeqCst),
        SIDE_EFFECT_CALLS.load(Ordering::SeqCst),
    );
    // A column argument makes the calls per row; the constant ones must not be folded.
    let result = rows(
        &session,
        &format!("SELECT noisy_plus_one(CAST(v AS BIGINT)), noisy_plus_one(1), logged_plus_one(1) {THREE_ROWS}"),
    )
    .await;
    assert_eq!(result.len(), 3);
    assert_eq!(
        RANDOM_CALLS.load(Ordering::SeqCst) - random,
        6,
        "3 rows x 2 calls"
    );
    assert_eq!(SIDE_EFFECT_CALLS.load(Ordering::SeqCst) - side_effect, 3);
    let plan = explain(&session, &format!("SELECT logged_plus_one(1) {THREE_ROWS}")).await;
    assert!(
        plan.contains("logged_plus_one(Int64(1))"),
        "kept in the plan:\n{plan}"
    );
}
