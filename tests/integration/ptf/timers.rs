//! Timers (rules 26–29 of docs/semantics.md): firing order, named and unnamed timers, timers in the past, timers
//! registered from `on_timer`, the end of input, and the TimerFunction example.

use std::time::Duration;

use udf_core::Value;
use udf_core::prelude::*;
use udf_examples::ptf::timer::TimerFunction;

use crate::row;
use crate::support::{column, error, partitioned_session, rows, session_with_partitions, strs};

/// `events(k, event, ts)`, ts from epoch milliseconds.
fn events(rows: &[(&str, &str, i64)]) -> Vec<crate::support::Column> {
    let keys: Vec<Option<&str>> = rows.iter().map(|r| Some(r.0)).collect();
    let events: Vec<Option<&str>> = rows.iter().map(|r| Some(r.1)).collect();
    vec![
        column("k", "STRING", strs(&keys)),
        column("event", "STRING", strs(&events)),
        column(
            "ts",
            "TIMESTAMP_LTZ(3)",
            rows.iter()
                .map(|r| Value::TimestampLtz(chrono::DateTime::from_timestamp_millis(r.2).unwrap()))
                .collect(),
        ),
    ]
}

/// One processor, watermark = max(ts) after every row.
fn session(rows: &[(&str, &str, i64)]) -> udf_runtime::Session {
    let session = session_with_partitions("events", &events(rows), 1);
    session.declare_watermark("events", "ts", Duration::ZERO);
    session
}

#[derive(Clone, Copy, Debug, Default)]
struct Ops;

/// `n:<ms>` registers timer `t`, `u:<ms>` an unnamed timer, `c` clears `t`, `a` clears all.
#[ptf(name = "Ops")]
impl Ops {
    fn eval(
        &self,
        ctx: &mut Context,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<String>,
    ) {
        let _ = out;
        let event = input.field("event").and_then(Value::as_str).unwrap_or("");
        let mut time = ctx.time_context();
        let at = |text: &str| text.parse::<i64>().expect("a time");
        match event.split_once(':') {
            Some(("n", ms)) => time.register_on_time_millis("t", at(ms)),
            Some(("u", ms)) => time.register_on_time_unnamed(
                chrono::DateTime::from_timestamp_millis(at(ms)).expect("in range"),
            ),
            _ if event == "c" => time.clear_timer("t"),
            _ if event == "a" => time.clear_all_timers(),
            _ => {}
        }
    }

    fn on_timer(&self, ctx: &mut OnTimerContext, out: &mut Collector<String>) {
        let name = ctx.current_timer().unwrap_or("(unnamed)").to_owned();
        let at = ctx.time_context().time_millis().unwrap_or(-1);
        out.collect(format!("{name}@{at}"));
    }
}

crate::on_both_backends! {
    async fn named_timers_replace_unnamed_ones_dedupe_and_clears_delete() {
        let session = session(&[
            ("a", "n:5000", 1000),
            ("a", "n:6000", 1100),
            ("a", "u:8000", 1200),
            ("a", "u:7000", 1300),
            ("a", "u:7000", 1400),
            ("a", "c", 1500),
            ("b", "n:4000", 1600),
            ("b", "u:4500", 1700),
            ("b", "a", 1800),
            ("c", "n:3000", 1900),
        ]);
        session.register(Ops).unwrap();
        let fired = rows(
            &session,
            "SELECT k, \"EXPR$0\", CAST(rowtime AS BIGINT) FROM Ops(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
        )
        .await;
        // At the end of input every pending timer fires once, in time order (rule 29 of docs/semantics.md); `t` of
        // a was replaced and then cleared, b's timers were all cleared, the duplicate unnamed
        // timer of a exists once.
        assert_eq!(
            fired,
            vec![
                row!["c", "t@3000", 3000_i64],
                row!["a", "(unnamed)@7000", 7000_i64],
                row!["a", "(unnamed)@8000", 8000_i64],
            ]
        );
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Past;

/// Every row emits `row <k>`; `p` registers timer `p` 10 s in the past; `on_timer` of `p`
/// registers `p2` at its own (past) time.
#[ptf(name = "Past")]
impl Past {
    fn eval(
        &self,
        ctx: &mut Context,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<String>,
    ) {
        let key = input.field("k").and_then(Value::as_str).unwrap_or("");
        out.collect(format!("row {key}"));
        if input.field("event").and_then(Value::as_str) == Some("p") {
            let mut time = ctx.time_context();
            let now = time.time_millis().expect("on_time");
            time.register_on_time_millis("p", now - 10_000);
        }
    }

    fn on_timer(&self, ctx: &mut OnTimerContext, out: &mut Collector<String>) {
        let name = ctx.current_timer().unwrap_or("").to_owned();
        let mut time = ctx.time_context();
        let at = time.time_millis().unwrap_or(-1);
        let watermark = time.current_watermark().map(|w| w.timestamp_millis());
        out.collect(format!("fired {name}@{at} under {watermark:?}"));
        if name == "p" {
            time.register_on_time_millis("p2", at);
        }
    }
}

crate::on_both_backends! {
    async fn past_timers_fire_at_the_next_advance_before_later_rows() {
        let session = session(&[("a", "p", 20_000), ("b", "x", 21_000), ("c", "x", 22_000)]);
        session.register(Past).unwrap();
        let out = rows(
            &session,
            "SELECT k, \"EXPR$0\", CAST(rowtime AS BIGINT) FROM Past(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
        )
        .await;
        // `p` (10 s, registered under no watermark) fires when the watermark reaches 20 s,
        // before row b; `p2`, registered from on_timer at 10 s, waits for the next advance
        // (21 s) and fires before row c (rules 26, 28 of docs/semantics.md). A timer's row carries its key and its
        // time.
        assert_eq!(
            out,
            vec![
                row!["a", "row a", 20_000_i64],
                row!["a", "fired p@10000 under Some(20000)", 10_000_i64],
                row!["b", "row b", 21_000_i64],
                row!["a", "fired p2@10000 under Some(21000)", 10_000_i64],
                row!["c", "row c", 22_000_i64],
            ]
        );
    }
}

crate::on_both_backends! {
    async fn timers_fire_while_input_still_arrives_with_several_processors() {
        // Key x registers a timer at 1 s (its row is at 11 s); keys y1..y20 move the watermark
        // to 40 s. Two input partitions and two processors: x's timer fires under a finite
        // watermark, while input arrives, not at the end of input (+inf, shown as None).
        let mut timeline = vec![("x".to_owned(), "p", 11_000)];
        for i in 1..=20 {
            timeline.push((format!("y{i}"), "x", 11_000 + 1500 * i));
        }
        let rows_in: Vec<(&str, &str, i64)> = timeline
            .iter()
            .map(|(k, e, t)| (k.as_str(), *e, *t))
            .collect();
        let session = partitioned_session("events", &events(&rows_in), 2);
        session.declare_watermark("events", "ts", Duration::ZERO);
        session.register(Past).unwrap();
        let fired: Vec<String> = rows(
            &session,
            "SELECT * FROM Past(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
        )
        .await
        .into_iter()
        .filter_map(|r| r[1].as_str().map(str::to_owned))
        .filter(|text| text.starts_with("fired p@"))
        .collect();
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(fired[0].contains("under Some("), "{fired:?}");
    }
}

/// a's second event within 60 s; b's and c's first only.
const TIMER_EVENTS: &[(&str, &str, i64)] = &[
    ("a", "first", 0),
    ("b", "first", 10_000),
    ("a", "second", 30_000),
    ("c", "first", 100_000),
];

crate::on_both_backends! {
    async fn timer_function_reports_second_events_and_timeouts() {
        let session = session(TIMER_EVENTS);
        session.register(TimerFunction).unwrap();
        let out: Vec<Value> = rows(
            &session,
            "SELECT k, \"EXPR$0\" FROM TimerFunction(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
        )
        .await
        .into_iter()
        .map(|r| r[1].clone())
        .collect();
        // a: a second event within 60 s (clear_all removes its timer); b times out at 70 s,
        // when c's row moves the watermark to 100 s; c times out at the end of input.
        assert_eq!(
            out,
            row![
                "Second event arrived for: a",
                "Timeout for: b",
                "Timeout for: c",
            ]
        );
    }
}

crate::on_both_backends! {
    /// The DataFrame form names the time column with `on_time`, as the SQL call's DESCRIPTOR.
    async fn the_dataframe_form_takes_on_time() {
        use udf_runtime::prelude::*;
        let session = session(TIMER_EVENTS);
        session.register(TimerFunction).unwrap();
        let df = session
            .table("events")
            .await
            .unwrap()
            .partition_by(vec![col("k")])
            .process(
                session
                    .process_table("TimerFunction", [])
                    .unwrap()
                    .on_time("ts"),
            )
            .unwrap();
        let from_sql = rows(
            &session,
            "SELECT * FROM TimerFunction(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert_eq!(from_sql.len(), 3);
        assert_eq!(
            crate::support::batches_to_rows(&df.collect().await.unwrap()),
            from_sql
        );
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Fragile;

/// Every row keeps its key and registers timer `check` 1 s after its time; the timer of
/// key `bad` fails, the one of key `worse` panics.
#[ptf(name = "Fragile")]
impl Fragile {
    fn eval(
        &self,
        ctx: &mut Context,
        #[state] key: &mut String,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<String>,
    ) {
        let _ = out;
        *key = input
            .field("k")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut time = ctx.time_context();
        let now = time.time_millis().expect("on_time");
        time.register_on_time_millis("check", now + 1000);
    }

    fn on_timer(
        &self,
        #[state] key: &mut String,
        out: &mut Collector<String>,
    ) -> Result<(), udf_core::Error> {
        // The key is checked once: its state goes with the timer.
        match std::mem::take(key).as_str() {
            "bad" => Err(udf_core::Error::msg("no good")),
            "worse" => panic!("worse"),
            key => {
                out.collect(format!("checked {key}"));
                Ok(())
            }
        }
    }
}

const FRAGILE: &str =
    "SELECT * FROM Fragile(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))";

crate::on_both_backends! {
    async fn a_timer_failing_between_rows_names_the_function_the_timer_and_the_key() {
        // Row x moves the watermark to 5 s: ok's timer fires, then bad's fails.
        let session = session(&[("ok", "", 0), ("bad", "", 500), ("x", "", 5000)]);
        session.register(Fragile).unwrap();
        let message = error(&session, FRAGILE).await.to_lowercase();
        assert!(
            message.contains(
                "process table function `fragile` failed in on_timer: no good (timer check at 1500 ms, key k => bad)"
            ),
            "{message}"
        );
    }
}

crate::on_both_backends! {
    async fn a_timer_panicking_at_the_end_of_input_names_the_function_the_timer_and_the_key() {
        let session = session(&[("ok", "", 0), ("worse", "", 100)]);
        session.register(Fragile).unwrap();
        let message = error(&session, FRAGILE).await.to_lowercase();
        assert!(
            message.contains("process table function `fragile` panicked in on_timer: worse (at tests/")
                && message.contains(") (timer check at 1100 ms, key k => worse)"),
            "{message}"
        );
    }
}
