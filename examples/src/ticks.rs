//! `ticks(n BIGINT, name STRING, ts TIMESTAMP(3))`: an unbounded table for trying streaming
//! queries in the shell — a row every tick, `name` cycling through `a`, `b`, `c`, and `ts`
//! one second of event time after the row before. Every query reads it from the start.

use std::sync::Arc;
use std::time::Duration;

use udf_core::arrow::array::TimestampMillisecondArray;
use udf_core::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use udf_core::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use udf_runtime::datafusion::catalog::streaming::StreamingTable;
use udf_runtime::datafusion::error::Result;
use udf_runtime::datafusion::execution::{SendableRecordBatchStream, TaskContext};
use udf_runtime::datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use udf_runtime::datafusion::physical_plan::streaming::PartitionStream;

/// The table, a row every `every`.
pub fn ticks_table(every: Duration) -> Result<StreamingTable> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new("name", DataType::Utf8, false),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
    ]));
    let ticks = Ticks {
        schema: schema.clone(),
        every,
    };
    Ok(StreamingTable::try_new(schema, vec![Arc::new(ticks)])?.with_infinite_table(true))
}

#[derive(Debug)]
struct Ticks {
    schema: SchemaRef,
    every: Duration,
}

impl PartitionStream for Ticks {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (schema, every) = (self.schema.clone(), self.every);
        let rows = futures::stream::unfold(0i64, move |n| {
            let schema = schema.clone();
            async move {
                tokio::time::sleep(every).await;
                Some((row(&schema, n), n + 1))
            }
        });
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), rows))
    }
}

fn row(schema: &SchemaRef, n: i64) -> Result<RecordBatch> {
    let name = ["a", "b", "c"][(n % 3) as usize];
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![n])),
        Arc::new(StringArray::from(vec![name])),
        Arc::new(TimestampMillisecondArray::from(vec![n * 1_000])),
    ];
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}
