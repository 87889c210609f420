//! In-memory tables (`register_batch`, `MemTable`) travel inside the plan as Arrow IPC, one
//! stream per partition: DataFusion's plan format has no form for them, and the inputs of
//! small queries and tests are usually such tables.

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference, plan_err};
use datafusion::datasource::MemTable;

/// `table`'s partitions as IPC streams, or `None` if it is not an in-memory table.
pub fn encode(table: &Arc<dyn TableProvider>, name: &TableReference) -> Result<Option<Vec<u8>>> {
    let Some(memory) = table.downcast_ref::<MemTable>() else {
        return Ok(None);
    };
    let mut partitions = Vec::with_capacity(memory.batches.len());
    for partition in &memory.batches {
        let Ok(batches) = partition.as_ref().try_read() else {
            return plan_err!(
                "table `{name}` is being written to, so it cannot be sent to a Ballista cluster"
            );
        };
        partitions.push(ipc_stream(&memory.schema(), &batches)?);
    }
    postcard::to_stdvec(&partitions)
        .map(Some)
        .map_err(|e| DataFusionError::Internal(format!("encoding table `{name}`: {e}")))
}

pub fn decode(buf: &[u8], schema: SchemaRef) -> Result<Arc<dyn TableProvider>> {
    let partitions: Vec<Vec<u8>> = postcard::from_bytes(buf)
        .map_err(|e| DataFusionError::Internal(format!("decoding an in-memory table: {e}")))?;
    let partitions = partitions
        .iter()
        .map(|stream| {
            StreamReader::try_new(stream.as_slice(), None)?
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(DataFusionError::from)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(MemTable::try_new(schema, partitions)?))
}

fn ipc_stream(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let mut writer = StreamWriter::try_new(Vec::new(), schema)?;
    for batch in batches {
        writer.write(batch)?;
    }
    Ok(writer.into_inner()?)
}
