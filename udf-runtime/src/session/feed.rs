//! A table the application feeds while queries run: an unbounded source backed by a
//! bounded channel. Queries over it emit as rows arrive; closing the feed ends the input
//! (and, for event time, moves the watermark to +∞). A sender waits while
//! [`FEED_CAPACITY`] batches are unread, so a producer faster than its query holds memory
//! for those batches only, however long it runs.

use std::fmt;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::common::{DataFusionError, Result, exec_err, plan_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::mpsc::{Receiver, Sender, channel};

/// Batches a feed holds before [`Feed::send`] waits for the query to read one.
pub const FEED_CAPACITY: usize = 16;

/// The sending end of a fed table.
#[derive(Clone)]
pub struct Feed {
    schema: SchemaRef,
    sender: Sender<RecordBatch>,
}

impl fmt::Debug for Feed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feed")
            .field("schema", &self.schema)
            .finish()
    }
}

impl Feed {
    /// Sends rows, waiting while [`FEED_CAPACITY`] batches are unread; an error if their
    /// schema is not the table's or no query reads the table any more.
    pub async fn send(&self, batch: RecordBatch) -> Result<()> {
        self.check(&batch)?;
        self.sender
            .send(batch)
            .await
            .map_err(|_| DataFusionError::Execution("the fed table is no longer read".into()))
    }

    /// [`Feed::send`] without waiting: an error if the feed already holds
    /// [`FEED_CAPACITY`] unread batches.
    pub fn try_send(&self, batch: RecordBatch) -> Result<()> {
        self.check(&batch)?;
        self.sender.try_send(batch).map_err(|error| match error {
            TrySendError::Full(_) => DataFusionError::Execution(format!(
                "the feed is full: {FEED_CAPACITY} batches wait to be read"
            )),
            TrySendError::Closed(_) => {
                DataFusionError::Execution("the fed table is no longer read".into())
            }
        })
    }

    fn check(&self, batch: &RecordBatch) -> Result<()> {
        if batch.schema().fields() != self.schema.fields() {
            return plan_err!(
                "the batch's columns {:?} are not the fed table's {:?}",
                batch.schema().fields(),
                self.schema.fields()
            );
        }
        Ok(())
    }

    /// Ends the input (dropping every clone of the feed does the same).
    pub fn close(self) {}
}

/// The table side: one partition, read by one query.
pub(crate) struct FedPartition {
    schema: SchemaRef,
    receiver: Mutex<Option<Receiver<RecordBatch>>>,
}

impl fmt::Debug for FedPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FedPartition")
    }
}

impl PartitionStream for FedPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let receiver = self
            .receiver
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let stream = futures::stream::unfold(receiver, |receiver| async move {
            let Some(mut receiver) = receiver else {
                let error: Result<RecordBatch> =
                    exec_err!("a fed table is read by one query only; register a new feed");
                return Some((error, None));
            };
            receiver
                .recv()
                .await
                .map(|batch| (Ok(batch), Some(receiver)))
        });
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
    }
}

/// A fed table and its feed.
pub(crate) fn fed_table(schema: SchemaRef) -> Result<(StreamingTable, Feed)> {
    let (sender, receiver) = channel(FEED_CAPACITY);
    let partition = FedPartition {
        schema: schema.clone(),
        receiver: Mutex::new(Some(receiver)),
    };
    let table = StreamingTable::try_new(schema.clone(), vec![Arc::new(partition)])?
        .with_infinite_table(true);
    Ok((table, Feed { schema, sender }))
}
