//! The functions of the PTF conformance cases, ported from their Java sources.

use udf_core::prelude::*;

use super::counting::CountState;

/// `Udfs.Counter`: counts rows per partition and emits the running count on every row.
#[ptf(name = "Counter")]
#[data_type("ROW<cnt BIGINT>")]
pub fn counter(
    #[state] state: &mut CountState,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<Row>,
) {
    let _ = input;
    state.count += 1;
    out.collect(Row::of([state.count.into()]));
}

/// `Udfs.Repeat`: repeats each row `times` times (1 if NULL), emitting the copy index and
/// twice the value of `v`.
#[ptf(name = "RepeatRows")]
#[data_type("ROW<copy INT, v2 INT>")]
pub fn repeat_rows(
    #[argument(row_semantic_table)] input: Row,
    #[argument(name = "times", type = "INT")] times: Option<i32>,
    out: &mut Collector<Row>,
) {
    let v = input.field("v").and_then(Value::as_i32);
    for i in 0..times.unwrap_or(1) {
        out.collect(Row::of([i.into(), v.map(|v| v.wrapping_mul(2)).into()]));
    }
}
