//! A table function in a lateral join against the built-in `unnest(string_to_array(..))`.

use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;

use super::{Workload, no_functions};

/// The pieces of `s` between commas, borrowed from the input (no allocation per row).
#[table_function]
fn split<'a>(s: &'a str, out: &mut Collector<&'a str>) {
    for piece in s.split(',') {
        out.collect(piece);
    }
}

fn register_split(session: &Session) -> Result<()> {
    session.register(split)
}

/// Three output rows per input row.
fn three_rows(rows: u64) -> u64 {
    rows * 3
}

pub const SPLIT: Workload = Workload {
    name: "split",
    sql: "SELECT id, w FROM src, LATERAL TABLE(split(concat('a,bb,', CAST(id AS STRING)))) AS T(w)",
    setup: register_split,
    baseline: Some("split_builtin"),
    expected_rows: three_rows,
    ..Workload::PLAIN
};

pub const SPLIT_BUILTIN: Workload = Workload {
    name: "split_builtin",
    sql: "SELECT id, unnest(string_to_array(concat('a,bb,', CAST(id AS STRING)), ',')) AS w FROM src",
    setup: no_functions,
    baseline: None,
    expected_rows: three_rows,
    ..Workload::PLAIN
};
