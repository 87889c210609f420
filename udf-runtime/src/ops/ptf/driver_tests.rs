//! The processor driver fed with synthetic router messages: watermarks combined over input
//! partitions, timers at the end of input, and snapshots — a processor's keyed state taken
//! mid-input and restored into a fresh processor gives, with the rest of the input, exactly the
//! output of an uninterrupted run (rule 33 of docs/semantics.md), for value state, timers, TTL,
//! a `MapView` and ORDER BY.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use datafusion::arrow::datatypes::{DataType as ArrowType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::common::{Result, ScalarValue};
use datafusion::datasource::MemTable;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionConfig;
use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

use super::driver::Driver;
use super::exec::PtfExec;
use crate::Session;
use crate::ops::routing::routed::Routed;
use crate::streaming::state::KeyedState;

/// Rows `(k, ts ms, v)`.
type Event = (&'static str, i64, i64);

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("k", ArrowType::Utf8, false),
        Field::new(
            "ts",
            ArrowType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
        Field::new("v", ArrowType::Int64, false),
    ]))
}

fn batch(events: &[Event]) -> RecordBatch {
    let keys: Vec<&str> = events.iter().map(|e| e.0).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(StringArray::from(keys)),
            Arc::new(TimestampMillisecondArray::from_iter_values(
                events.iter().map(|e| e.1),
            )),
            Arc::new(Int64Array::from_iter_values(events.iter().map(|e| e.2))),
        ],
    )
    .expect("a batch of the schema")
}

/// What the router sends one processor for `batches` of one input partition: the watermark
/// `max(ts) - delay` after every row (`None` without event time), processing time `now` per
/// batch, then the end of the partition.
fn messages(source: usize, batches: &[(&[Event], i64)], delay: Option<i64>) -> Vec<Routed> {
    let mut max: Option<i64> = None;
    let mut out = Vec::new();
    for (events, now) in batches {
        let (times, before) = match delay {
            Some(delay) => {
                let mut before = Vec::new();
                for event in events.iter() {
                    before.push(max.map(|m| m - delay));
                    max = Some(max.map_or(event.1, |m| m.max(event.1)));
                }
                (Some(events.iter().map(|e| e.1).collect()), Some(before))
            }
            None => (None, None),
        };
        out.push(Routed::Rows {
            source,
            batch: batch(events),
            times,
            before,
            after: delay.and(max).map(|m| m - delay.unwrap_or(0)),
            now: *now,
        });
    }
    out.push(Routed::End { source });
    out
}

/// A session over `events` (watermark `ts - delay` if given) with `register` applied, and the
/// PTF exec of `sql`.
async fn exec_of(
    sql: &str,
    delay: Option<i64>,
    register: impl FnOnce(&Session),
) -> (Session, Arc<dyn ExecutionPlan>) {
    let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
    let table = MemTable::try_new(schema(), vec![vec![batch(&[])]]).expect("a table");
    session
        .register_table("events", Arc::new(table))
        .expect("registered");
    if let Some(delay) = delay {
        session.declare_watermark("events", "ts", Duration::from_millis(delay as u64));
    }
    register(&session);
    let plan = session
        .sql(sql)
        .await
        .expect("planned")
        .create_physical_plan()
        .await
        .expect("a physical plan");
    let found = PtfExec::find(&plan).expect("the plan calls a PTF");
    (session, found)
}

fn driver(session: &Session, exec: &Arc<dyn ExecutionPlan>, sources: usize) -> Driver {
    let exec = (exec.as_ref() as &dyn Any)
        .downcast_ref::<PtfExec>()
        .expect("a PTF exec");
    exec.driver(&session.task_ctx(), &[sources])
        .expect("a processor")
}

/// Each output row as its values joined by `,`.
/// Hands `driver` the first `count` of `messages`.
fn feed(driver: &mut Driver, messages: Vec<Routed>, count: usize) {
    for message in messages.into_iter().take(count) {
        driver.receive(message).unwrap();
    }
}

fn table(batches: &[RecordBatch]) -> Vec<String> {
    let text = pretty_format_batches(batches)
        .expect("printable")
        .to_string();
    text.lines()
        .filter(|line| line.starts_with('|'))
        .skip(1)
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            cells.join(",")
        })
        .collect()
}

/// Feeds `messages` to a processor in one go, and again with a snapshot after `cut` of them
/// restored into a fresh processor for the rest: both outputs, and the snapshot's size.
async fn run_with_restore(
    exec: &Arc<dyn ExecutionPlan>,
    session: &Session,
    messages: impl Fn() -> Vec<Routed>,
    cut: usize,
) -> Result<(Vec<String>, Vec<String>, usize)> {
    let mut whole = driver(session, exec, 1);
    for message in messages() {
        whole.receive(message)?;
    }
    let uninterrupted = whole.take_output()?;

    let mut first = driver(session, exec, 1);
    let mut messages = messages().into_iter();
    for message in messages.by_ref().take(cut) {
        first.receive(message)?;
    }
    let mut output = first.take_output()?;
    let snapshot = first.snapshot()?;
    drop(first);
    let mut second = driver(session, exec, 1);
    second.restore(&snapshot)?;
    for message in messages {
        second.receive(message)?;
    }
    output.extend(second.take_output()?);
    Ok((table(&uninterrupted), table(&output), snapshot.len()))
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Count {
    n: i64,
}

/// A running count per key.
#[ptf]
fn running_count(
    #[state] count: &mut Count,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    let _ = input;
    count.n += 1;
    out.collect(count.n);
}

#[tokio::test]
async fn a_restored_counter_counts_on() {
    let sql = "SELECT * FROM running_count(input => TABLE events PARTITION BY k)";
    let (session, exec) = exec_of(sql, None, |s| s.register(running_count).unwrap()).await;
    let messages = || {
        messages(
            0,
            &[
                (&[("a", 1, 0), ("b", 2, 0), ("a", 3, 0)], 0),
                (&[("b", 4, 0), ("a", 5, 0)], 0),
                (&[("c", 6, 0), ("a", 7, 0)], 0),
            ],
            None,
        )
    };
    let (whole, restored, size) = run_with_restore(&exec, &session, messages, 1)
        .await
        .unwrap();
    assert_eq!(restored, whole);
    assert_eq!(whole, ["a,1", "b,1", "a,2", "b,2", "a,3", "c,1", "a,4"]);
    assert!(size > 0);
}

/// Each row sets the key's timer `t` at `ts + v`; the timer emits the key's sum of `v`.
#[derive(Clone, Copy, Debug, Default)]
struct Deadline;

#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
struct Sum {
    total: i64,
}

#[ptf]
impl Deadline {
    fn eval(
        &self,
        ctx: &mut Context,
        #[state] sum: &mut Sum,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<String>,
    ) {
        let _ = out;
        let v = input.field("v").and_then(Value::as_i64).unwrap_or(0);
        sum.total += v;
        let mut time = ctx.time_context();
        let at = time.time_millis().unwrap_or(0) + v;
        time.register_on_time_millis("t", at);
    }

    fn on_timer(
        &self,
        ctx: &mut OnTimerContext,
        #[state] sum: &mut Sum,
        out: &mut Collector<String>,
    ) {
        let at = ctx.time_context().time_millis().unwrap_or(-1);
        out.collect(format!("{} at {at}", sum.total));
    }
}

#[tokio::test]
async fn restored_timers_fire_as_the_originals_would() {
    let sql =
        "SELECT * FROM Deadline(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))";
    let (session, exec) = exec_of(sql, Some(0), |s| s.register(Deadline).unwrap()).await;
    let messages = || {
        messages(
            0,
            &[
                (&[("a", 1000, 500), ("b", 1100, 3000), ("c", 1200, 300)], 0),
                (&[("a", 1400, 100), ("b", 2000, 10)], 0),
                (&[("c", 2100, 5000), ("a", 2500, 50)], 0),
            ],
            Some(0),
        )
    };
    for cut in 1..=3 {
        let (whole, restored, _) = run_with_restore(&exec, &session, messages, cut)
            .await
            .unwrap();
        assert_eq!(restored, whole, "snapshot after {cut} messages");
    }
    let (whole, _, _) = run_with_restore(&exec, &session, messages, 1)
        .await
        .unwrap();
    // a's timer is set again (1400 + 100), after c's: at the watermark 2000 c's fires first.
    // b's fires before a's row at 2500, the rest at the end of input.
    assert_eq!(
        whole,
        [
            "c,300 at 1500,1970-01-01T00:00:01.500",
            "a,600 at 1500,1970-01-01T00:00:01.500",
            "b,3010 at 2010,1970-01-01T00:00:02.010",
            "a,650 at 2550,1970-01-01T00:00:02.550",
            "c,5300 at 7100,1970-01-01T00:00:07.100",
        ]
    );
}

#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
struct Last {
    v: i64,
}

/// Emits the key's previous `v` (0 when there is none or it expired) and keeps the new one
/// for 1 s of processing time.
#[ptf]
fn previous(
    #[state(ttl = "1 s")] last: &mut Last,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    out.collect(last.v);
    last.v = input.field("v").and_then(Value::as_i64).unwrap_or(0);
}

#[tokio::test]
async fn restored_entries_expire_when_the_originals_would() {
    let sql = "SELECT * FROM previous(input => TABLE events PARTITION BY k)";
    let (session, exec) = exec_of(sql, None, |s| s.register(previous).unwrap()).await;
    // Processing time per batch: b's entry written at 0 has expired at 1000, a's written at
    // 600 has not.
    let messages = || {
        messages(
            0,
            &[
                (&[("a", 0, 1), ("b", 0, 2)], 0),
                (&[("a", 0, 3)], 600),
                (&[("a", 0, 4), ("b", 0, 5)], 1000),
            ],
            None,
        )
    };
    let (whole, restored, _) = run_with_restore(&exec, &session, messages, 2)
        .await
        .unwrap();
    assert_eq!(restored, whole);
    assert_eq!(whole, ["a,0", "b,0", "a,1", "a,3", "b,0"]);
}

/// Counts each `v` per key in a map and lists the values in arrival order; emits how often
/// the row's `v` was seen.
#[ptf]
fn seen(
    #[state] counts: &mut MapView<i64, i64>,
    #[state] history: &mut ListView<i64>,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    let v = input.field("v").and_then(Value::as_i64).unwrap_or(0);
    let n = counts.get(&v).copied().unwrap_or(0) + 1;
    counts.put(v, n);
    history.add(v);
    out.collect(n);
}

#[tokio::test]
async fn a_restored_map_view_keeps_every_entry() {
    let sql = "SELECT * FROM seen(input => TABLE events PARTITION BY k)";
    let (session, exec) = exec_of(sql, None, |s| s.register(seen).unwrap()).await;
    let messages = || {
        messages(
            0,
            &[
                (&[("a", 0, 1), ("a", 0, 2), ("b", 0, 1)], 0),
                (&[("a", 0, 1), ("a", 0, 2), ("a", 0, 1), ("b", 0, 1)], 0),
            ],
            None,
        )
    };
    let (whole, restored, _) = run_with_restore(&exec, &session, messages, 1)
        .await
        .unwrap();
    assert_eq!(restored, whole);
    assert_eq!(whole, ["a,1", "a,1", "b,1", "a,2", "a,2", "a,3", "b,2"]);

    // The views of a restored processor, entry by entry.
    let mut first = driver(&session, &exec, 1);
    first.receive(messages().swap_remove(0)).unwrap();
    let mut restored = driver(&session, &exec, 1);
    restored.restore(&first.snapshot().unwrap()).unwrap();
    let a = [ScalarValue::Utf8(Some("a".into()))];
    let mut counts = restored.state().map::<i64, i64>("counts", &a).unwrap();
    counts.sort();
    assert_eq!(counts, [(1, 1), (2, 1)]);
    assert_eq!(restored.state().list::<i64>("history", &a).unwrap(), [1, 2]);
}

/// Passes each row's `v` on, in time order.
#[ptf]
fn ordered(#[argument(set_semantic_table)] input: Row, out: &mut Collector<i64>) {
    out.collect(input.field("v").and_then(Value::as_i64).unwrap_or(0));
}

#[tokio::test]
async fn rows_waiting_for_order_by_survive_a_restore() {
    let sql = "SELECT * FROM ordered(input => TABLE events PARTITION BY k ORDER BY ts)";
    let (session, exec) = exec_of(sql, Some(1000), |s| s.register(ordered).unwrap()).await;
    let messages = || {
        messages(
            0,
            &[
                (&[("a", 3000, 3), ("a", 1000, 1), ("b", 2100, 2)], 0),
                (&[("a", 2500, 25), ("b", 1500, 15), ("a", 4000, 4)], 0),
                (&[("b", 6000, 6), ("a", 5000, 5)], 0),
            ],
            Some(1000),
        )
    };
    let mut first = driver(&session, &exec, 1);
    feed(&mut first, messages(), 1);
    assert!(
        first.state().rows_waiting() > 0,
        "the snapshot is taken while rows wait"
    );
    // Restored into two processors (another count), each takes the waiting rows of its own
    // keys: `a`'s to one, `b`'s to the other.
    let snapshot = first.snapshot().unwrap();
    let waiting_of = |key: &'static str| {
        let keep = move |keys: &[datafusion::arrow::array::ArrayRef], count: usize| {
            let keys = datafusion::arrow::array::AsArray::as_string::<i32>(keys[0].as_ref());
            Ok((0..count).map(|row| keys.value(row) == key).collect())
        };
        let mut restored = driver(&session, &exec, 1);
        restored.restore_part(&snapshot, 0, &keep).unwrap();
        restored.state().rows_waiting()
    };
    let (a, b) = (waiting_of("a"), waiting_of("b"));
    assert!(a > 0 && b > 0, "{a} and {b}");
    assert_eq!(a + b, first.state().rows_waiting());
    for cut in 1..=3 {
        let (whole, restored, _) = run_with_restore(&exec, &session, messages, cut)
            .await
            .unwrap();
        assert_eq!(restored, whole, "snapshot after {cut} messages");
    }
    let (whole, _, _) = run_with_restore(&exec, &session, messages, 1)
        .await
        .unwrap();
    // Per key in time order. Late rows are dropped: a's 1000 and b's 1500 arrive behind the
    // watermark 2000, a's 5000 behind 5000.
    let of = |key: &str| -> Vec<String> {
        whole
            .iter()
            .filter(|row| row.starts_with(key))
            .cloned()
            .collect()
    };
    assert_eq!(of("a"), ["a,25", "a,3", "a,4"]);
    assert_eq!(of("b"), ["b,2", "b,6"]);
}

#[tokio::test]
async fn the_watermark_is_the_minimum_over_input_partitions() {
    let sql =
        "SELECT * FROM Deadline(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))";
    let (session, exec) = exec_of(sql, Some(0), |s| s.register(Deadline).unwrap()).await;
    let mut driver = driver(&session, &exec, 2);
    // Partition 0 is far ahead; partition 1 holds the watermark back.
    let batches: &[(&[Event], i64)] = &[(&[("a", 1000, 10)], 0), (&[("x", 9000, 1)], 0)];
    feed(&mut driver, messages(0, batches, Some(0)), 2);
    assert!(table(&driver.take_output().unwrap()).is_empty());
    feed(
        &mut driver,
        messages(1, &[(&[("b", 1005, 1)], 0)], Some(0)),
        1,
    );
    // Now the minimum is 1005: a's timer at 1010 and b's at 1006 wait.
    assert!(table(&driver.take_output().unwrap()).is_empty());
    feed(
        &mut driver,
        messages(1, &[(&[("b", 2000, 1)], 0)], Some(0)),
        1,
    );
    // b's row at 2000 moved b's timer to 2001 before the watermark reached 2000.
    let fired = table(&driver.take_output().unwrap());
    assert_eq!(
        fired,
        ["a,10 at 1010,1970-01-01T00:00:01.010"],
        "x's timer waits for partition 1"
    );
    // Both partitions end: every timer fires.
    driver.receive(Routed::End { source: 0 }).unwrap();
    driver.receive(Routed::End { source: 1 }).unwrap();
    let rest = table(&driver.take_output().unwrap());
    assert_eq!(
        rest,
        [
            "b,2 at 2001,1970-01-01T00:00:02.001",
            "x,1 at 9001,1970-01-01T00:00:09.001"
        ]
    );
}

#[tokio::test]
async fn state_is_read_and_written_by_key_and_snapshots_check_what_they_restore_into() {
    let sql = "SELECT * FROM running_count(input => TABLE events PARTITION BY k)";
    let (session, exec) = exec_of(sql, None, |s| s.register(running_count).unwrap()).await;
    let mut first = driver(&session, &exec, 1);
    for message in messages(0, &[(&[("a", 0, 0), ("a", 0, 0), ("b", 0, 0)], 0)], None) {
        first.receive(message).unwrap();
    }
    let key = |k: &str| [ScalarValue::Utf8(Some(k.to_owned()))];
    let count =
        |state: &KeyedState, k: &str| state.value::<Count>("count", &key(k)).unwrap().map(|c| c.n);
    assert_eq!(count(first.state(), "a"), Some(2));
    assert_eq!(count(first.state(), "z"), None);
    let missing = first.state().value::<Count>("other", &key("a"));
    assert!(
        missing
            .unwrap_err()
            .to_string()
            .contains("has no state entry `other` (its entries: count)")
    );
    let snapshot = first.snapshot().unwrap();

    // A processor that already holds state takes no snapshot.
    let error = first.restore(&snapshot).unwrap_err().to_string();
    assert!(error.contains("fresh processor"), "{error}");
    // Bytes that are not a snapshot are an error, not a panic.
    let mut fresh = driver(&session, &exec, 1);
    assert!(fresh.restore(&snapshot[..snapshot.len() / 2]).is_err());
    let mut fresh = driver(&session, &exec, 1);
    fresh.restore(&snapshot).unwrap();
    assert_eq!(count(fresh.state(), "b"), Some(1));

    // Entries written and cleared from outside the function's calls are what it then sees.
    fresh
        .state_mut()
        .put_value("count", &key("c"), &Count { n: 10 })
        .unwrap();
    fresh.state_mut().clear(Some("count"), &key("a")).unwrap();
    fresh.state_mut().clear(None, &key("b")).unwrap();
    for message in messages(0, &[(&[("c", 0, 0), ("a", 0, 0), ("b", 0, 0)], 0)], None) {
        fresh.receive(message).unwrap();
    }
    assert_eq!(table(&fresh.take_output().unwrap()), ["c,11", "a,1", "b,1"]);

    // A snapshot of another function's processor (other keys) is refused.
    let (other_session, other) = exec_of(
        "SELECT * FROM running_count(input => TABLE (SELECT v, k FROM events) PARTITION BY v)",
        None,
        |s| s.register(running_count).unwrap(),
    )
    .await;
    let error = driver(&other_session, &other, 1)
        .restore(&snapshot)
        .unwrap_err()
        .to_string();
    assert!(error.contains("is keyed by (Utf8)"), "{error}");
}
