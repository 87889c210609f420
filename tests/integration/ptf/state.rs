//! Keyed state (rules 22–24 of docs/semantics.md): value state read before and written after each call only if
//! it changed, the initial value stored as absent, clears applied after the call, TTL on a
//! processing-time clock (injected here), list and map entries expiring one by one.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use udf_core::Value;
use udf_core::arrow::array::RecordBatch;
use udf_core::arrow::datatypes::SchemaRef;
use udf_core::prelude::*;
use udf_core::ptf::ManualClock;
use udf_runtime::Session;
use udf_runtime::datafusion::catalog::streaming::StreamingTable;
use udf_runtime::datafusion::execution::{SendableRecordBatchStream, TaskContext};
use udf_runtime::datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use udf_runtime::datafusion::physical_plan::streaming::PartitionStream;

use super::one_processor;
use crate::row;
use crate::support::{batch, column, rows, session_of, strs};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Last {
    event: Option<String>,
}

/// Emits the previous event of the key; a `reset` event clears the state after the call,
/// although the call wrote it.
#[ptf(name = "PreviousEvent")]
fn previous_event(
    ctx: &mut Context,
    #[state] last: &mut Last,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<Option<String>>,
) {
    let event = input
        .field("event")
        .and_then(Value::as_str)
        .map(str::to_owned);
    out.collect(last.event.take());
    if event.as_deref() == Some("reset") {
        ctx.clear_state("last");
    }
    last.event = event;
}

crate::on_both_backends! {
    async fn clear_state_takes_effect_after_the_call() {
        let table = vec![
            column("k", "STRING", strs(&[Some("a"); 4])),
            column(
                "event",
                "STRING",
                strs(&[Some("x"), Some("reset"), Some("y"), Some("z")]),
            ),
        ];
        let session = one_processor("events", &table);
        session.register(previous_event).unwrap();
        let previous: Vec<Value> = rows(
            &session,
            "SELECT * FROM PreviousEvent(input => TABLE events PARTITION BY k)",
        )
        .await
        .into_iter()
        .map(|r| r[1].clone())
        .collect();
        assert_eq!(previous, [Value::Null, "x".into(), Value::Null, "y".into()]);
    }
}

/// One-row batches of `(k, event)`, each read at its processing time: the clock is set
/// to a batch's time as the batch is handed on.
#[derive(Debug)]
struct ClockedRows {
    schema: SchemaRef,
    rows: Vec<(i64, RecordBatch)>,
    clock: ManualClock,
}

impl PartitionStream for ClockedRows {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let clock = self.clock.clone();
        let rows = self.rows.clone();
        let stream = futures::stream::iter(rows).map(move |(time, batch)| {
            clock.set(time);
            Ok(batch)
        });
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
    }
}

use futures::StreamExt;

/// A one-processor session reading `timeline` (`(ms, key, event)`) as table `events`, with
/// a manual processing clock.
pub(super) fn clocked_session(timeline: &[(i64, &str, &str)]) -> Session {
    let clock = ManualClock::at(0);
    let rows: Vec<(i64, RecordBatch)> = timeline
        .iter()
        .map(|(time, k, event)| {
            (
                *time,
                batch(&[
                    column("k", "STRING", strs(&[Some(k)])),
                    column("event", "STRING", strs(&[Some(event)])),
                ]),
            )
        })
        .collect();
    let schema = rows[0].1.schema();
    let session = session_of(1);
    session
        .set_processing_clock(Arc::new(clock.clone()))
        .unwrap();
    let source = ClockedRows {
        schema: schema.clone(),
        rows,
        clock,
    };
    let table = StreamingTable::try_new(schema, vec![Arc::new(source)]).unwrap();
    session.register_table("events", Arc::new(table)).unwrap();
    session
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Tally {
    count: i64,
}

/// `add` counts; `peek` only reads (and so writes nothing back).
#[ptf(name = "Tally")]
pub(super) fn tally_function(
    #[state(ttl = "10 s")] tally: &mut Tally,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    if input.field("event").and_then(Value::as_str) == Some("add") {
        tally.count += 1;
    }
    out.collect(tally.count);
}

crate::on_both_backends! {
    async fn ttl_counts_from_the_last_write_and_reads_do_not_extend_it() {
        let session = clocked_session(&[
            (0, "a", "add"),
            (5_000, "a", "peek"),
            (9_999, "a", "peek"),
            (10_000, "a", "peek"),
            (10_001, "a", "add"),
            (15_000, "a", "add"),
            (24_999, "a", "peek"),
        ]);
        session.register(tally_function).unwrap();
        let counts: Vec<Value> = rows(
            &session,
            "SELECT * FROM Tally(input => TABLE events PARTITION BY k)",
        )
        .await
        .into_iter()
        .map(|r| r[1].clone())
        .collect();
        // Written at 0: alive at 9,999, gone at 10,000 although read at 5,000 and 9,999.
        // Written again at 10,001 and 15,000: alive at 24,999.
        let expected: Vec<Value> = [1_i64, 1, 1, 0, 1, 2, 2].map(Value::from).to_vec();
        assert_eq!(counts, expected);
    }
}

/// `put:<name>` remembers a name; every row reports the names alive, sorted.
#[ptf(name = "Names")]
fn names_function(
    #[state(ttl = "10 s")] names: &mut MapView<String, i64>,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<String>,
) {
    if let Some(name) = input
        .field("event")
        .and_then(Value::as_str)
        .and_then(|e| e.strip_prefix("put:"))
    {
        names.put(name.to_owned(), 1);
    }
    let mut alive: Vec<String> = names.keys().collect();
    alive.sort();
    out.collect(alive.join(","));
}

crate::on_both_backends! {
    async fn map_entries_expire_one_by_one() {
        let session = clocked_session(&[
            (0, "a", "put:x"),
            (6_000, "a", "put:y"),
            (9_000, "b", "put:z"),
            (10_000, "a", "peek"),
            (16_000, "a", "peek"),
            (16_500, "b", "peek"),
        ]);
        session.register(names_function).unwrap();
        let alive: Vec<Value> = rows(
            &session,
            "SELECT * FROM Names(input => TABLE events PARTITION BY k)",
        )
        .await
        .into_iter()
        .map(|r| r[1].clone())
        .collect();
        assert_eq!(
            alive,
            row!["x", "x,y", "z", "y", "", "z"]
        );
    }
}

/// Flips a flag per row: after an even number of rows the flag is back at its initial
/// value, which is stored as absent.
#[ptf(name = "Toggle")]
fn toggle(
    #[state] on: &mut bool,
    #[state] history: &mut ListView<i64>,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<bool>,
) {
    let _ = input;
    *on = !*on;
    if *on {
        history.add(1);
    } else {
        history.clear();
    }
    out.collect(*on);
}

crate::on_both_backends! {
    async fn state_at_its_initial_value_is_absent_and_frees_the_key() {
        let keys: Vec<Option<String>> = (0..1000)
            .flat_map(|k| [Some(format!("k{k}")), Some(format!("k{k}"))])
            .collect();
        let keys: Vec<Option<&str>> = keys.iter().map(Option::as_deref).collect();
        let session = one_processor("t", &[column("k", "STRING", strs(&keys))]);
        session.register(toggle).unwrap();
        let df = session
            .sql("SELECT * FROM Toggle(input => TABLE t PARTITION BY k)")
            .await
            .unwrap();
        let plan = df.create_physical_plan().await.unwrap();
        let batches = udf_runtime::datafusion::physical_plan::collect(plan.clone(), session.task_ctx())
            .await
            .unwrap();
        assert_eq!(
            batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
            2000
        );
        let metrics = crate::ptf::plans::ptf_metrics(&plan);
        assert_eq!(metrics("input_rows"), 2000);
        assert_eq!(
            metrics("state_entries"),
            0,
            "every key's flag is back at false"
        );
        assert_eq!(
            metrics("state_keys"),
            0,
            "keys without state give their slot back"
        );
    }
}
