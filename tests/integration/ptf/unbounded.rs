//! Unbounded inputs: a table the application feeds at run time (`Session::register_feed`, a
//! `StreamingTable` over a channel). The PTF emits as it goes — timer output arrives while the input is still open —
//! and a long run whose keys expire through timers keeps a bounded number of keys.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use udf_core::Value;
use udf_core::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use udf_core::arrow::datatypes::{Field, Schema, SchemaRef};
use udf_core::prelude::*;
use udf_core::types::DataType;
use udf_examples::ptf::timer::TimerFunction;
use udf_runtime::datafusion::datasource::MemTable;
use udf_runtime::datafusion::execution::SendableRecordBatchStream;
use udf_runtime::datafusion::physical_plan::{ExecutionPlanProperties, collect};

/// `(k STRING, ts TIMESTAMP_LTZ(3))`.
fn schema() -> SchemaRef {
    let ts: DataType = "TIMESTAMP_LTZ(3)".parse().unwrap();
    Arc::new(Schema::new(vec![
        Field::new("k", udf_core::arrow::datatypes::DataType::Utf8, false),
        ts.to_arrow_field("ts").with_nullable(false),
    ]))
}

fn batch(schema: &SchemaRef, keys: Vec<String>, millis: Vec<i64>) -> RecordBatch {
    let ts = udf_core::arrow::compute::cast(&Int64Array::from(millis), schema.field(1).data_type())
        .unwrap();
    let keys: ArrayRef = Arc::new(StringArray::from(keys));
    RecordBatch::try_new(schema.clone(), vec![keys, ts]).unwrap()
}

/// The next output batch, failing the test after 10 s instead of hanging.
async fn next(
    output: &mut SendableRecordBatchStream,
) -> Option<udf_runtime::datafusion::error::Result<RecordBatch>> {
    tokio::time::timeout(Duration::from_secs(10), output.next())
        .await
        .expect("output within 10 s")
}

crate::on_both_backends! {
    async fn timer_output_arrives_before_the_input_ends() {
        let schema = schema();
        let session = crate::support::session_of(1);
        let feed = session.register_feed("events", schema.clone()).unwrap();
        session.declare_watermark("events", "ts", Duration::ZERO);
        session.register(TimerFunction).unwrap();
        let df = session
            .sql("SELECT k, \"EXPR$0\" FROM TimerFunction(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))")
            .await
            .unwrap();
        let plan = df.create_physical_plan().await.unwrap();
        assert!(plan.boundedness().is_unbounded());
        let mut output =
            udf_runtime::datafusion::physical_plan::execute_stream(plan, session.task_ctx()).unwrap();

        let wrong = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                "id",
                udf_core::arrow::datatypes::DataType::Int64,
                false,
            )])),
            vec![Arc::new(Int64Array::from(vec![1]))],
        )
        .unwrap();
        let refused = feed.send(wrong).await.unwrap_err().to_string();
        assert!(refused.contains("are not the fed table's"), "{refused}");
        feed.send(batch(&schema, vec!["a".into()], vec![0]))
            .await
            .unwrap();
        feed.send(batch(&schema, vec!["b".into()], vec![100_000]))
            .await
            .unwrap();
        // a's timeout (60 s) fires when b's row moves the watermark to 100 s: its row comes out
        // while the input is still open.
        let first = next(&mut output).await.unwrap().unwrap();
        assert_eq!(
            crate::support::batches_to_rows(&[first]),
            vec![crate::row!["a", "Timeout for: a"]]
        );
        feed.close();
        let mut rest = Vec::new();
        while let Some(batch) = next(&mut output).await {
            rest.push(batch.unwrap());
        }
        assert_eq!(
            crate::support::batches_to_rows(&rest),
            vec![crate::row!["b", "Timeout for: b"]]
        );
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Visits {
    count: i64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Sessions;

/// Counts a key's rows until it is idle for a second, then emits the count and forgets it.
#[ptf(name = "Sessions")]
impl Sessions {
    fn eval(
        &self,
        ctx: &mut Context,
        #[state] visits: &mut Visits,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<i64>,
    ) {
        let _ = (input, out);
        visits.count += 1;
        let mut time = ctx.time_context();
        let now = time.time_millis().expect("on_time");
        time.register_on_time_millis("idle", now + 1000);
    }

    fn on_timer(
        &self,
        ctx: &mut OnTimerContext,
        #[state] visits: &mut Visits,
        out: &mut Collector<i64>,
    ) {
        out.collect(visits.count);
        ctx.clear_all();
    }
}

crate::on_both_backends! {
    async fn keys_that_expire_through_timers_keep_memory_bounded() {
        // 2,000,000 rows, one per millisecond; every 50 consecutive rows share a key, so 40,000
        // keys come and go. The watermark moves after every batch of 8,192 rows, so a key's
        // timer fires at most a batch after it is due: about 190 keys are live at a time.
        let schema = schema();
        let rows: i64 = 2_000_000;
        let mut batches = Vec::new();
        let mut start = 0;
        while start < rows {
            let end = (start + 8192).min(rows);
            batches.push(batch(
                &schema,
                (start..end).map(|i| format!("k{}", i / 50)).collect(),
                (start..end).collect(),
            ));
            start = end;
        }
        let session = crate::support::session_of(1);
        session
            .register_table(
                "clicks",
                Arc::new(MemTable::try_new(schema, vec![batches]).unwrap()),
            )
            .unwrap();
        session.declare_watermark_with(
            "clicks",
            "ts",
            Duration::ZERO,
            udf_runtime::WatermarkEmission::EveryBatch,
        );
        session.register(Sessions).unwrap();
        let df = session
            .sql("SELECT * FROM Sessions(input => TABLE clicks PARTITION BY k, on_time => DESCRIPTOR(ts))")
            .await
            .unwrap();
        let plan = df.create_physical_plan().await.unwrap();
        let out = collect(plan.clone(), session.task_ctx()).await.unwrap();
        let sessions = crate::support::batches_to_rows(&out);
        assert_eq!(sessions.len(), 40_000);
        assert!(sessions.iter().all(|r| r[1] == Value::BigInt(50)));
        let metrics = crate::ptf::plans::ptf_metrics(&plan);
        let peak = metrics("state_keys_peak");
        assert!(peak <= 400, "about 190 keys are live at once, saw {peak}");
        assert_eq!(metrics("state_keys"), 0);
        assert_eq!(metrics("timers"), 0);
    }
}
