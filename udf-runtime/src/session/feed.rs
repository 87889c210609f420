//! A table the application feeds while queries run: an unbounded source backed by a
//! bounded channel. Queries over it emit as rows arrive; closing the feed ends the input
//! (and, for event time, moves the watermark to +∞). A sender waits while
//! [`FEED_CAPACITY`] batches are unread, so a producer faster than its query holds memory
//! for those batches only, however long it runs.
//!
//! A feed is a replayable source for checkpoints: its rows are numbered in the order they
//! are sent, a checkpoint records how many were read before it, and [`Feed::durable_rows`]
//! tells the application how many a complete checkpoint covers — after a restart it sends
//! again from there.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Field, SchemaRef};
use datafusion::catalog::{Session as CatalogSession, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, exec_err, internal_err, plan_err};
use datafusion::datasource::TableType;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::mpsc::{Receiver, Sender, channel};

use crate::changelog;
use crate::checkpoint::barrier::OnComplete;
use crate::checkpoint::manifest::Manifest;

/// Batches a feed holds before [`Feed::send`] waits for the query to read one.
pub const FEED_CAPACITY: usize = 16;

/// The sending end of a fed table.
#[derive(Clone)]
pub struct Feed {
    schema: SchemaRef,
    sender: Sender<RecordBatch>,
    shared: Arc<Shared>,
}

impl fmt::Debug for Feed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feed")
            .field("table", &self.shared.table)
            .field("schema", &self.schema)
            .finish()
    }
}

impl Feed {
    /// Sends rows, waiting while [`FEED_CAPACITY`] batches are unread; an error if their
    /// schema is not the table's or no query reads the table any more.
    pub async fn send(&self, batch: RecordBatch) -> Result<()> {
        let batch = self.check(batch)?;
        self.sender
            .send(batch)
            .await
            .map_err(|_| DataFusionError::Execution("the fed table is no longer read".into()))
    }

    /// [`Feed::send`] without waiting: an error if the feed already holds
    /// [`FEED_CAPACITY`] unread batches.
    pub fn try_send(&self, batch: RecordBatch) -> Result<()> {
        let batch = self.check(batch)?;
        self.sender.try_send(batch).map_err(|error| match error {
            TrySendError::Full(_) => DataFusionError::Execution(format!(
                "the feed is full: {FEED_CAPACITY} batches wait to be read"
            )),
            TrySendError::Closed(_) => {
                DataFusionError::Execution("the fed table is no longer read".into())
            }
        })
    }

    /// The rows of the feed's input (counted from its very first, across restarts) that the
    /// latest complete checkpoint covers: a query restored from it reads on from there, so
    /// these need not be sent again. 0 before the first checkpoint.
    pub fn durable_rows(&self) -> u64 {
        self.shared.durable.load(Ordering::Acquire)
    }

    /// The batch with the table's schema (field metadata, such as the mark of the row-kind
    /// column, comes from the table), or an error naming what does not match.
    fn check(&self, batch: RecordBatch) -> Result<RecordBatch> {
        let same = |a: &Field, b: &Field| {
            a.name() == b.name()
                && a.data_type() == b.data_type()
                && a.is_nullable() == b.is_nullable()
        };
        let sent = batch.schema();
        if sent.fields().len() != self.schema.fields().len()
            || !sent
                .fields()
                .iter()
                .zip(self.schema.fields())
                .all(|(a, b)| same(a, b))
        {
            return plan_err!(
                "the batch's columns {:?} are not the fed table's {:?}",
                sent.fields(),
                self.schema.fields()
            );
        }
        let batch = RecordBatch::try_new(self.schema.clone(), batch.columns().to_vec())?;
        if let Some(op) = changelog::row_kind_index(&self.schema) {
            let table = &self.shared.table;
            changelog::retractions(batch.column(op), &format!("the batch sent to `{table}`"))?;
        }
        Ok(batch)
    }

    /// Ends the input (dropping every clone of the feed does the same).
    pub fn close(self) {}
}

/// What the feed and the table share.
struct Shared {
    table: String,
    schema: SchemaRef,
    receiver: Mutex<Option<Receiver<RecordBatch>>>,
    durable: AtomicU64,
}

/// A fed table and its feed.
pub(crate) fn fed_table(table: &str, schema: SchemaRef) -> (FeedTable, Feed) {
    let (sender, receiver) = channel(FEED_CAPACITY);
    let shared = Arc::new(Shared {
        table: table.to_owned(),
        schema: schema.clone(),
        receiver: Mutex::new(Some(receiver)),
        durable: AtomicU64::new(0),
    });
    (
        FeedTable {
            shared: shared.clone(),
        },
        Feed {
            schema,
            sender,
            shared,
        },
    )
}

/// The table side of a feed.
pub(crate) struct FeedTable {
    shared: Arc<Shared>,
}

impl fmt::Debug for FeedTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FeedTable({})", self.shared.table)
    }
}

#[async_trait]
impl TableProvider for FeedTable {
    fn schema(&self) -> SchemaRef {
        self.shared.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn CatalogSession,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(FeedExec::new(
            self.shared.clone(),
            projection.cloned(),
        )?))
    }
}

/// Reads a fed table: one partition, unbounded, read by one query.
pub struct FeedExec {
    shared: Arc<Shared>,
    projection: Option<Vec<usize>>,
    properties: Arc<PlanProperties>,
}

impl fmt::Debug for FeedExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FeedExec({})", self.shared.table)
    }
}

impl FeedExec {
    fn new(shared: Arc<Shared>, projection: Option<Vec<usize>>) -> Result<Self> {
        let schema = match &projection {
            Some(columns) => Arc::new(shared.schema.project(columns)?),
            None => shared.schema.clone(),
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Unbounded {
                requires_infinite_memory: false,
            },
        ));
        Ok(FeedExec {
            shared,
            projection,
            properties,
        })
    }

    /// The fed table's name.
    pub fn table(&self) -> &str {
        &self.shared.table
    }

    /// Tells the feed what each complete checkpoint covers.
    pub fn durable_hook(&self) -> OnComplete {
        let shared = self.shared.clone();
        Arc::new(move |manifest: &Manifest| {
            if let Some(rows) = manifest.position(&shared.table) {
                shared.durable.store(rows, Ordering::Release);
            }
        })
    }
}

impl DisplayAs for FeedExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "FeedExec: table={}", self.shared.table)?;
        if self.projection.is_some() {
            let names: Vec<&str> = self
                .properties
                .eq_properties
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect();
            write!(f, ", projection=[{}]", names.join(", "))?;
        }
        Ok(())
    }
}

impl ExecutionPlan for FeedExec {
    fn name(&self) -> &str {
        "FeedExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !children.is_empty() {
            return internal_err!("FeedExec has no inputs");
        }
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return internal_err!("FeedExec has one partition, not {}", partition + 1);
        }
        let receiver = self
            .shared
            .receiver
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let projection = self.projection.clone();
        let stream = futures::stream::unfold(receiver, move |receiver| {
            let projection = projection.clone();
            async move {
                let Some(mut receiver) = receiver else {
                    let error: Result<RecordBatch> =
                        exec_err!("a fed table is read by one query only; register a new feed");
                    return Some((error, None));
                };
                let batch = receiver.recv().await?;
                let batch = match &projection {
                    Some(columns) => batch.project(columns).map_err(DataFusionError::from),
                    None => Ok(batch),
                };
                Some((batch, Some(receiver)))
            }
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema(),
            stream,
        )))
    }
}
