//! The generated input `src(id BIGINT)` = 1..=N, in memory, split into batches over the
//! partitions; and draining a query's output without keeping it.

use std::sync::Arc;

use futures::StreamExt;
use udf_runtime::Session;
use udf_runtime::datafusion::arrow::array::{AsArray, Int64Array, RecordBatch};
use udf_runtime::datafusion::arrow::datatypes::Int64Type;
use udf_runtime::datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use udf_runtime::datafusion::datasource::MemTable;
use udf_runtime::datafusion::error::Result;
use udf_runtime::datafusion::physical_plan::execute_stream_partitioned;

const BATCH_ROWS: u64 = 8192;

pub fn register(session: &Session, rows: u64, partitions: usize) -> Result<()> {
    let (schema, parts) = partitioned(rows, partitions)?;
    session.register_table("src", Arc::new(MemTable::try_new(schema, parts)?))?;
    Ok(())
}

/// The ids 1..=rows in batches, dealt to `partitions` partitions in turn.
pub fn partitioned(rows: u64, partitions: usize) -> Result<(SchemaRef, Vec<Vec<RecordBatch>>)> {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let mut parts: Vec<Vec<RecordBatch>> = vec![Vec::new(); partitions];
    let mut start = 1;
    let mut batch_index = 0;
    while start <= rows {
        let end = (start + BATCH_ROWS - 1).min(rows);
        let ids = Int64Array::from_iter_values(start as i64..=end as i64);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids)])?;
        parts[batch_index % partitions].push(batch);
        batch_index += 1;
        start = end + 1;
    }
    Ok((schema, parts))
}

/// What draining a query saw.
pub struct Drained {
    pub rows: u64,
    /// Rows whose first column did not exceed the previous row's (same partition), when
    /// checked.
    pub out_of_order: u64,
}

/// Runs `sql` with every output partition driven concurrently; counts the rows and, with
/// `check_order`, the rows out of order (the first column must increase).
pub async fn drain(session: &Session, sql: &str, check_order: bool) -> Result<Drained> {
    let df = session.sql(sql).await?;
    let task_context = Arc::new(df.task_ctx());
    let plan = df.create_physical_plan().await?;
    let streams = execute_stream_partitioned(plan, task_context)?;
    let counts = futures::future::try_join_all(streams.into_iter().map(|mut stream| {
        tokio::spawn(async move {
            let (mut rows, mut out_of_order) = (0u64, 0u64);
            let mut previous = i64::MIN;
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                rows += batch.num_rows() as u64;
                if check_order {
                    let values = batch.column(0).as_primitive::<Int64Type>();
                    for value in values.iter().flatten() {
                        if value <= previous {
                            out_of_order += 1;
                        }
                        previous = value;
                    }
                }
            }
            Ok::<(u64, u64), udf_runtime::datafusion::error::DataFusionError>((rows, out_of_order))
        })
    }))
    .await
    .map_err(|e| udf_runtime::datafusion::error::DataFusionError::External(Box::new(e)))?;
    let mut drained = Drained {
        rows: 0,
        out_of_order: 0,
    };
    for count in counts {
        let (rows, out_of_order) = count?;
        drained.rows += rows;
        drained.out_of_order += out_of_order;
    }
    Ok(drained)
}
