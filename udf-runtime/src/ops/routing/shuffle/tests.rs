//! The stamp and its undoing: each processor gets the messages the local router would send.

use std::sync::Arc;

use datafusion::arrow::array::{
    AsArray, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray,
};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_plan::collect_partitioned;

use super::{ROUTE, ShuffleStampExec, Unstamp, routes};
use crate::ops::routing::routed::Routed;
use crate::ops::routing::router::{key_hashes, processor_of};
use crate::streaming::event_time::{EventTime, WatermarkEmission};

fn events(keys: &[&str], millis: &[i64]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Utf8, false),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(keys.to_vec())),
            Arc::new(TimestampMillisecondArray::from(millis.to_vec())),
        ],
    )
    .unwrap()
}

fn processor_of_key(key: &str, processors: usize) -> usize {
    let batch = events(&[key], &[0]);
    let mut hashes = Vec::new();
    key_hashes(&[Arc::new(Column::new("k", 0))], &batch, &mut hashes).unwrap();
    processor_of(hashes[0], processors)
}

/// Two keys that go to different processors of two.
fn keys_apart() -> (&'static str, &'static str) {
    let names = ["a", "b", "c", "d", "e", "f"];
    let first = names[0];
    let other = names
        .iter()
        .find(|k| processor_of_key(k, 2) != processor_of_key(first, 2))
        .expect("some key goes elsewhere");
    (first, other)
}

/// Each source partition's stamped batches, for `processors` processors.
async fn stamped(partitions: Vec<Vec<RecordBatch>>, processors: usize) -> Vec<Vec<RecordBatch>> {
    let schema = partitions[0][0].schema();
    let input = MemorySourceConfig::try_new_exec(&partitions, schema, None).unwrap();
    let keys: Vec<Arc<dyn PhysicalExpr>> = vec![Arc::new(Column::new("k", 0))];
    let time = EventTime {
        name: "ts".into(),
        column: 1,
        delay_millis: 0,
        emission: WatermarkEmission::EveryRow,
    };
    let stamp = ShuffleStampExec::new(input, keys, Some(time), processors);
    collect_partitioned(Arc::new(stamp), Arc::new(TaskContext::default()))
        .await
        .unwrap()
}

/// The rows of `batch` bound for `processor`, as a shuffle would deliver them.
fn for_processor(batch: &RecordBatch, processor: usize, processors: usize) -> RecordBatch {
    let route = routes(processors).unwrap()[processor];
    let column = batch.column(batch.schema().index_of(ROUTE).unwrap());
    let keep = datafusion::arrow::compute::kernels::cmp::eq(column, &Int64Array::new_scalar(route))
        .unwrap();
    filter_record_batch(batch, &keep).unwrap()
}

fn unstamp_for(processor: usize, sources: usize) -> Unstamp {
    let time = EventTime {
        name: "ts".into(),
        column: 1,
        delay_millis: 0,
        emission: WatermarkEmission::EveryRow,
    };
    let route = routes(2).unwrap()[processor];
    Unstamp::new("f", 0, sources, route, processor, Some(time))
}

/// A message as (source, keys, before, after), or (source) for an end.
type Seen = (usize, Vec<String>, Vec<Option<i64>>, Option<i64>);

fn seen(messages: &[Routed]) -> Vec<Seen> {
    messages
        .iter()
        .map(|message| match message {
            Routed::Rows {
                source,
                batch,
                before,
                after,
                ..
            } => {
                let keys = batch.column(0).as_string::<i32>();
                (
                    *source,
                    keys.iter().map(|k| k.unwrap().to_string()).collect(),
                    before.clone().unwrap(),
                    *after,
                )
            }
            Routed::End { source } => (*source, vec!["<end>".into()], vec![], None),
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn each_processor_hears_its_rows_and_every_watermark_and_end() {
    let (a, b) = keys_apart();
    let batch = events(&[a, b, a], &[1000, 2000, 3000]);
    let partitions = stamped(vec![vec![batch]], 2).await;
    let own = |key: &str| vec![key.to_string()];
    for (processor, expected) in [
        (
            processor_of_key(a, 2),
            vec![
                (
                    0,
                    vec![a.to_string(), a.to_string()],
                    vec![None, Some(2000)],
                    None,
                ),
                (0, vec![], vec![], Some(3000)),
                (0, own("<end>"), vec![], None),
            ],
        ),
        (
            processor_of_key(b, 2),
            vec![
                (0, own(b), vec![Some(1000)], None),
                (0, vec![], vec![], Some(3000)),
                (0, own("<end>"), vec![], None),
            ],
        ),
    ] {
        let mut unstamp = unstamp_for(processor, 1);
        let mut messages = Vec::new();
        for batch in &partitions[0] {
            let mine = for_processor(batch, processor, 2);
            unstamp.messages(&mine, 0, &mut messages).unwrap();
        }
        assert_eq!(seen(&messages), expected, "processor {processor}");
        unstamp.finish().unwrap();
        // Batches coalesced after the shuffle: the advance travels with the rows before it.
        let whole = datafusion::arrow::compute::concat_batches(
            &partitions[0][0].schema(),
            &partitions[0]
                .iter()
                .map(|batch| for_processor(batch, processor, 2))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let mut coalesced = Vec::new();
        unstamp_for(processor, 1)
            .messages(&whole, 0, &mut coalesced)
            .unwrap();
        let mut joined = expected.clone();
        joined[0].3 = Some(3000);
        joined.remove(1);
        assert_eq!(seen(&coalesced), joined, "processor {processor}, coalesced");
    }
}

#[tokio::test]
async fn a_processor_without_rows_still_hears_the_watermark() {
    let (a, _) = keys_apart();
    let partitions = stamped(vec![vec![events(&[a, a], &[1000, 4000])]], 2).await;
    let other = 1 - processor_of_key(a, 2);
    let mut unstamp = unstamp_for(other, 1);
    let mut messages = Vec::new();
    for batch in &partitions[0] {
        unstamp
            .messages(&for_processor(batch, other, 2), 0, &mut messages)
            .unwrap();
    }
    assert_eq!(
        seen(&messages),
        vec![
            (0, vec![], vec![], Some(4000)),
            (0, vec!["<end>".to_string()], vec![], None)
        ]
    );
}

#[tokio::test]
async fn rows_of_another_processor_a_wrong_source_count_or_a_lost_end_are_errors() {
    let (a, _) = keys_apart();
    let partitions = stamped(vec![vec![events(&[a], &[1000])]], 2).await;
    let mine = processor_of_key(a, 2);
    let data = &partitions[0][0];
    let message = unstamp_for(1 - mine, 1)
        .messages(data, 0, &mut Vec::new())
        .unwrap_err()
        .to_string();
    assert!(message.contains("with the route of another"), "{message}");

    let end = partitions[0].last().unwrap();
    let message = unstamp_for(mine, 2)
        .messages(&for_processor(end, mine, 2), 0, &mut Vec::new())
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("partition count before the shuffle is 1, but it was planned with 2"),
        "{message}"
    );

    let mut lost = unstamp_for(mine, 1);
    lost.messages(&for_processor(data, mine, 2), 0, &mut Vec::new())
        .unwrap();
    let message = lost.finish().unwrap_err().to_string();
    assert!(message.contains("stopped without its end"), "{message}");
}
