//! A scalar function against the same arithmetic as a built-in expression.

use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;

use super::{Workload, no_functions, same_rows};

/// `a * 31 + b`, wrapping like the engine's own integer arithmetic.
#[scalar_function]
fn mix(a: i64, b: i64) -> i64 {
    a.wrapping_mul(31).wrapping_add(b)
}

pub(super) fn register_mix(session: &Session) -> Result<()> {
    session.register(mix)
}

pub const SCALAR: Workload = Workload {
    name: "scalar",
    sql: "SELECT mix(id, id % 1000) FROM src",
    setup: register_mix,
    baseline: Some("builtin_expr"),
    expected_rows: same_rows,
    ..Workload::PLAIN
};

pub const BUILTIN_EXPR: Workload = Workload {
    name: "builtin_expr",
    sql: "SELECT id * 31 + id % 1000 FROM src",
    setup: no_functions,
    baseline: None,
    expected_rows: same_rows,
    ..Workload::PLAIN
};

pub const PASSTHROUGH: Workload = Workload {
    name: "passthrough",
    sql: "SELECT id FROM src",
    setup: no_functions,
    baseline: None,
    expected_rows: same_rows,
    ..Workload::PLAIN
};
