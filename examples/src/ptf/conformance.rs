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

/// `Udfs.Timeout`: every row (re)registers the named timer `timeout` at `time + gap_ms`
/// (5 s when NULL); `on_timer` emits how many rows came since the last timeout, and when.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timeout;

#[ptf(name = "Timeout")]
impl Timeout {
    #[data_type("ROW<seen BIGINT, fired_at BIGINT>")]
    fn eval(
        &self,
        ctx: &mut Context,
        #[state] state: &mut CountState,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        #[argument(name = "gap_ms", optional, type = "BIGINT")] gap_ms: Option<i64>,
        out: &mut Collector<Row>,
    ) {
        let _ = (input, out);
        state.count += 1;
        let gap = gap_ms.unwrap_or(5000);
        let mut time = ctx.time_context();
        if let Some(now) = time.time_millis() {
            time.register_on_time_millis("timeout", now + gap);
        }
    }

    fn on_timer(
        &self,
        ctx: &mut OnTimerContext,
        #[state] state: &mut CountState,
        out: &mut Collector<Row>,
    ) {
        let fired_at = ctx.time_context().time_millis();
        out.collect(Row::of([state.count.into(), fired_at.into()]));
        state.count = 0;
    }
}

/// `Udfs.SeenOrder`: emits every row it sees with its value, a running sequence number and
/// the watermark at that moment.
#[ptf(name = "SeenOrder")]
#[data_type("ROW<v INT, seq BIGINT, wm BIGINT>")]
pub fn seen_order(
    ctx: &mut Context,
    #[state] state: &mut CountState,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<Row>,
) {
    state.count += 1;
    let watermark = ctx
        .time_context()
        .current_watermark()
        .map(|w| w.timestamp_millis());
    out.collect(Row::of([
        input.field("v").cloned().unwrap_or(Value::Null),
        state.count.into(),
        watermark.into(),
    ]));
}

/// `Udfs.KindEcho`: a set-semantics table that may be a changelog (`supports_updates`,
/// Flink's `SUPPORT_UPDATES`); emits every row's kind, its `v` and a running count per key.
#[ptf(name = "KindEcho")]
#[data_type("ROW<kind STRING, v INT, seq BIGINT>")]
pub fn kind_echo(
    ctx: &mut Context,
    #[state] state: &mut CountState,
    #[argument(set_semantic_table, supports_updates)] input: Row,
    out: &mut Collector<Row>,
) {
    state.count += 1;
    let v = input.field("v").and_then(Value::as_i32);
    out.collect(Row::of([
        ctx.row_kind().short().into(),
        v.into(),
        state.count.into(),
    ]));
}
