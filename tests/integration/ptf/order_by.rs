//! ORDER BY on a set-semantics table (rules 30, 31 of docs/semantics.md): rows reach `eval` in time order (more
//! columns break ties) once the watermark passes them; late rows are dropped and counted.
//! Without ORDER BY late rows reach `eval`.

use std::time::Duration;

use udf_core::Value;
use udf_core::prelude::*;
use udf_runtime::datafusion::physical_plan::collect;

use crate::row;
use crate::support::{column, error, events, rows, session_with_partitions, strs};

/// Emits the `priority` of every row it sees (NULL as -1).
#[ptf(name = "my_ptf")]
fn my_ptf(
    #[argument(set_semantic_table, name = "input_table")] input: Row,
    out: &mut Collector<i32>,
) {
    out.collect(
        input
            .field("priority")
            .and_then(Value::as_i32)
            .unwrap_or(-1),
    );
}

fn source_table() -> Vec<crate::support::Column> {
    let millis = [5000, 1000, 3000, 1000, 1000, 9000, 2000, 12_000];
    vec![
        column("user_id", "STRING", strs(&[Some("u"); 8])),
        column(
            "event_time",
            "TIMESTAMP_LTZ(3)",
            millis
                .iter()
                .map(|m| Value::TimestampLtz(chrono::DateTime::from_timestamp_millis(*m).unwrap()))
                .collect(),
        ),
        column(
            "priority",
            "INT",
            vec![
                Value::Int(1),
                Value::Int(2),
                Value::Int(3),
                Value::Null,
                Value::Int(7),
                Value::Int(4),
                Value::Int(5),
                Value::Int(6),
            ],
        ),
    ]
}

crate::on_both_backends! {
    async fn rows_arrive_in_time_order_and_late_rows_are_dropped() {
        let session = session_with_partitions("source_table", &source_table(), 1);
        session.declare_watermark("source_table", "event_time", Duration::from_millis(1000));
        session.register(my_ptf).unwrap();
        // The SQL of the ProcessTableFunction documentation.
        let sql = "SELECT * FROM my_ptf(
                     input_table => TABLE source_table
                       PARTITION BY user_id
                       ORDER BY (event_time ASC, priority DESC NULLS FIRST)
                   )";
        let df = session.sql(sql).await.unwrap();
        let plan = df.create_physical_plan().await.unwrap();
        let batches = collect(plan.clone(), session.task_ctx()).await.unwrap();
        let seen: Vec<Value> = crate::support::batches_to_rows(&batches)
            .into_iter()
            .map(|r| r[1].clone())
            .collect();
        // Watermarks (max - 1 s): 4000 after the first row, so the rows at 1 s and 3 s that
        // follow are late; 8000 after the 9 s row; 11 000 after the last. The 2 s row is late
        // too. What is left comes out by time: 5 s, 9 s, then 12 s at the end of input.
        assert_eq!(seen, row![1, 4, 6]);
        let metrics = crate::ptf::plans::ptf_metrics(&plan);
        assert_eq!(metrics("late_rows_dropped"), 5);

        // Ties: with a watermark far behind, nothing is late; the three rows at 1 s come out
        // by priority DESC NULLS FIRST.
        session.declare_watermark("source_table", "event_time", Duration::from_secs(60));
        assert_eq!(
            rows(&session, sql)
                .await
                .into_iter()
                .map(|r| r[1].clone())
                .collect::<Vec<_>>(),
            row![-1, 7, 2, 5, 3, 1, 4, 6]
        );
    }
}

crate::on_both_backends! {
    async fn without_order_by_late_rows_reach_eval() {
        let session = session_with_partitions("source_table", &source_table(), 1);
        session.declare_watermark("source_table", "event_time", Duration::from_millis(1000));
        session.register(my_ptf).unwrap();
        let seen = rows(
            &session,
            "SELECT * FROM my_ptf(input_table => TABLE source_table PARTITION BY user_id)",
        )
        .await;
        assert_eq!(seen.len(), 8);
    }
}

crate::on_both_backends! {
    async fn order_by_errors() {
        let session = session_with_partitions("source_table", &source_table(), 1);
        session.register(my_ptf).unwrap();
        let no_watermark = error(
            &session,
            "SELECT * FROM my_ptf(input_table => TABLE source_table PARTITION BY user_id ORDER BY event_time)",
        )
        .await;
        assert!(
            no_watermark.contains("`event_time` has no watermark"),
            "{no_watermark}"
        );
        session.declare_watermark("source_table", "event_time", Duration::ZERO);
        let descending = error(
            &session,
            "SELECT * FROM my_ptf(input_table => TABLE source_table PARTITION BY user_id ORDER BY (event_time DESC))",
        )
        .await;
        assert!(descending.contains("cannot be DESC"), "{descending}");
        let not_time = error(
            &session,
            "SELECT * FROM my_ptf(input_table => TABLE source_table PARTITION BY user_id ORDER BY priority)",
        )
        .await;
        assert!(
            not_time.contains("the first ORDER BY column of `my_ptf` must be a TIMESTAMP"),
            "{not_time}"
        );
    }
}

/// Emits `row <k>@<time> under <watermark>` and registers timer `t` `after` ms later.
fn trace_row(ctx: &mut Context, input: &Row, out: &mut Collector<String>, after: i64) {
    let key = input.field("k").and_then(Value::as_str).unwrap_or("");
    let mut time = ctx.time_context();
    let at = time.time_millis().expect("on_time");
    let watermark = time.current_watermark().map(|w| w.timestamp_millis());
    out.collect(format!("row {key}@{at} under {watermark:?}"));
    time.register_on_time_millis("t", at + after);
}

/// A firing timer's time and the watermark it fires under (epoch ms).
fn timer_time(ctx: &mut OnTimerContext) -> (i64, Option<i64>) {
    let time = ctx.time_context();
    let at = time.time_millis().unwrap_or(-1);
    (at, time.current_watermark().map(|w| w.timestamp_millis()))
}

#[derive(Clone, Copy, Debug, Default)]
struct Ordered;

/// Emits each row it sees with the watermark it sees, and registers a timer 500 ms after the
/// row, which emits the same when it fires.
#[ptf(name = "Ordered")]
impl Ordered {
    fn eval(
        &self,
        ctx: &mut Context,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<String>,
    ) {
        trace_row(ctx, &input, out, 500);
    }

    fn on_timer(&self, ctx: &mut OnTimerContext, out: &mut Collector<String>) {
        let (at, watermark) = timer_time(ctx);
        out.collect(format!("timer @{at} under {watermark:?}"));
    }
}

crate::on_both_backends! {
    async fn ordered_rows_and_timers_interleave_advance_by_advance() {
        let columns = events(&["a", "b", "a", "b", "c"], &[1000, 2000, 3000, 2500, 6000]);
        // One batch; the watermark (max so far) moves before rows 1, 2 and 3 and after the
        // batch: every move releases the row it passed, under the watermark before the move,
        // then fires the timers it made due. The row at 2.5 s is late (the watermark is 3 s).
        let session = session_with_partitions("events", &columns, 1);
        session.declare_watermark("events", "ts", Duration::ZERO);
        session.register(Ordered).unwrap();
        let out = rows(
            &session,
            "SELECT k, \"EXPR$0\" FROM Ordered(input => TABLE events PARTITION BY k ORDER BY ts, on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert_eq!(
            out,
            vec![
                row!["a", "row a@1000 under None"],
                row!["b", "row b@2000 under Some(1000)"],
                row!["a", "timer @1500 under Some(2000)"],
                row!["a", "row a@3000 under Some(2000)"],
                row!["b", "timer @2500 under Some(3000)"],
                row!["c", "row c@6000 under Some(3000)"],
                row!["a", "timer @3500 under Some(6000)"],
                row!["c", "timer @6500 under None"],
            ]
        );
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Chained;

/// Each row registers timer `t` 100 ms after it; `t`, when it fires, registers an unnamed
/// timer 100 ms after itself. Every call says what it is and the watermark it sees.
#[ptf(name = "Chained")]
impl Chained {
    fn eval(
        &self,
        ctx: &mut Context,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<String>,
    ) {
        trace_row(ctx, &input, out, 100);
    }

    fn on_timer(&self, ctx: &mut OnTimerContext, out: &mut Collector<String>) {
        let named = ctx.current_timer().is_some();
        let (at, watermark) = timer_time(ctx);
        let name = if named { "t" } else { "u" };
        out.collect(format!("timer {name}@{at} under {watermark:?}"));
        if named {
            ctx.time_context().register_on_time_unnamed(
                chrono::DateTime::from_timestamp_millis(at + 100).expect("in range"),
            );
        }
    }
}

crate::on_both_backends! {
    async fn each_advance_fires_its_timers_even_when_it_releases_no_row() {
        let columns = events(
            &["x", "y", "z", "w", "v", "s"],
            &[1000, 1600, 1700, 1750, 2500, 2600],
        );
        // Watermark max - 500 ms, one batch. Before the rows: 500 (releases nothing), 1100
        // (x), 1200 and 1250 (nothing), 2000 (y, z, w, key by key); 2100 after the batch; the
        // rest at the end. x's `t` fires at 1100; the `u` it registers fires at the next
        // advance, 1200, though that advance releases no row — before the rows of 2000.
        let session = session_with_partitions("events", &columns, 1);
        session.declare_watermark("events", "ts", Duration::from_millis(500));
        session.register(Chained).unwrap();
        let out = rows(
            &session,
            "SELECT k, \"EXPR$0\" FROM Chained(input => TABLE events PARTITION BY k ORDER BY ts, on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert_eq!(
            out,
            vec![
                row!["x", "row x@1000 under Some(500)"],
                row!["x", "timer t@1100 under Some(1100)"],
                row!["x", "timer u@1200 under Some(1200)"],
                row!["w", "row w@1750 under Some(1250)"],
                row!["y", "row y@1600 under Some(1250)"],
                row!["z", "row z@1700 under Some(1250)"],
                row!["y", "timer t@1700 under Some(2000)"],
                row!["z", "timer t@1800 under Some(2000)"],
                row!["w", "timer t@1850 under Some(2000)"],
                row!["y", "timer u@1800 under Some(2100)"],
                row!["z", "timer u@1900 under Some(2100)"],
                row!["w", "timer u@1950 under Some(2100)"],
                row!["s", "row s@2600 under Some(2100)"],
                row!["v", "row v@2500 under Some(2100)"],
                row!["v", "timer t@2600 under None"],
                row!["s", "timer t@2700 under None"],
            ]
        );
    }
}
