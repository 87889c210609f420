//! `scalar_null_handling` and `named_params_optional`.

use std::sync::atomic::{AtomicUsize, Ordering};

use udf_core::Value;
use udf_core::prelude::*;

use super::{check, load, on_a_cluster, session};
use crate::support::rows;

/// `a*31+b` over boxed arguments: NULL in, NULL out, decided by the function.
#[scalar_function(name = "Mix")]
pub(super) fn mix(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a?.wrapping_mul(31).wrapping_add(b?))
}

static MIX_PRIM_CALLS: AtomicUsize = AtomicUsize::new(0);
/// Held by each test that calls `MixPrim`, so the one counting its calls counts only its own
/// (the tests run at once).
static MIX_PRIM_USE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The same over primitive arguments: strict, so never called for NULL.
#[scalar_function(name = "MixPrim")]
pub(super) fn mix_prim(a: i64, b: i64) -> i64 {
    MIX_PRIM_CALLS.fetch_add(1, Ordering::SeqCst);
    a.wrapping_mul(31).wrapping_add(b)
}

/// Boxed arguments, NULL read as 0.
#[scalar_function(name = "NullAsZero")]
pub(super) fn null_as_zero(a: Option<i64>, b: Option<i64>) -> i64 {
    a.unwrap_or(0).wrapping_mul(31).wrapping_add(b.unwrap_or(0))
}

/// Named parameters, the second optional (omitted → NULL).
#[scalar_function(name = "Greet")]
pub(super) fn greet(
    #[argument(type = "STRING")] name: Option<&str>,
    #[argument(optional, type = "STRING")] greeting: Option<&str>,
) -> String {
    format!(
        "{}, {}",
        greeting.unwrap_or("<null-greeting>"),
        name.unwrap_or("null")
    )
}

#[tokio::test]
async fn scalar_null_handling() {
    let _only_user = MIX_PRIM_USE.lock().await;
    let case = load("scalar_null_handling");
    let session = session(&case);
    session.register(mix).unwrap();
    session.register(mix_prim).unwrap();
    session.register(null_as_zero).unwrap();
    check(&case, &session).await;
    let cluster = on_a_cluster(&case, 2, |s| {
        s.register(mix)?;
        s.register(mix_prim)?;
        s.register(null_as_zero)
    })
    .await;
    check(&case, &cluster).await;
}

/// Flink only accepts NOT NULL arguments for primitive parameters (hence the COALESCE in the
/// case). Here a parameter without `Option` makes the function strict instead (SEMANTICS
/// rule 2 of docs/semantics.md): a NULL argument gives NULL and the function is not called for that row.
#[tokio::test]
async fn primitive_parameters_are_strict_instead_of_rejected() {
    let _only_user = MIX_PRIM_USE.lock().await;
    let case = load("scalar_null_handling");
    let session = session(&case);
    session.register(mix_prim).unwrap();
    let before = MIX_PRIM_CALLS.load(Ordering::SeqCst);
    let result = rows(&session, "SELECT MixPrim(a, b) FROM input").await;
    let calls = MIX_PRIM_CALLS.load(Ordering::SeqCst) - before;
    let values: Vec<Value> = result.into_iter().map(|mut r| r.remove(0)).collect();
    assert_eq!(
        values,
        vec![
            Value::BigInt(33),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::BigInt(-148),
            Value::BigInt(9223372036854775778),
        ]
    );
    assert_eq!(calls, 3, "called only for the three rows without NULL");
}

#[tokio::test]
async fn named_params_optional() {
    let case = load("named_params_optional");
    let session = session(&case);
    session.register(greet).unwrap();
    check(&case, &session).await;
    check(&case, &on_a_cluster(&case, 2, |s| s.register(greet)).await).await;
}
