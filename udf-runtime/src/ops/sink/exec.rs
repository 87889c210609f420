//! `CommittingSinkExec`: what `INSERT INTO` a CSV or Parquet table becomes with checkpoints
//! on (see `mod.rs`). One output row, the count of rows committed, once the final checkpoint
//! (or a savepoint that stopped the query) has committed the last files.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use datafusion::arrow::array::{RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType as ArrowType, Field, Schema, SchemaRef};
use datafusion::common::file_options::parquet_writer::ParquetWriterOptions;
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, exec_err, internal_err, plan_err};
use datafusion::datasource::file_format::csv::CsvSink;
use datafusion::datasource::file_format::parquet::ParquetSink;
use datafusion::datasource::physical_plan::FileSink;
use datafusion::datasource::sink::DataSinkExec;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::StreamExt;
use futures::stream::BoxStream;

use super::input;
use super::part_file::{Format, PartFile};
use crate::checkpoint::barrier::{Barrier, Flow, Outcome};
use crate::checkpoint::manifest::SinkFile;

#[derive(Clone)]
pub struct CommittingSinkExec {
    input: Arc<dyn ExecutionPlan>,
    /// The table's directory.
    dir: PathBuf,
    format: Format,
    /// The table's columns.
    table_schema: SchemaRef,
    uid: String,
    properties: Arc<PlanProperties>,
}

impl fmt::Debug for CommittingSinkExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CommittingSinkExec({})", self.dir.display())
    }
}

fn count_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new(
        "count",
        ArrowType::UInt64,
        false,
    )]))
}

impl CommittingSinkExec {
    /// The committing form of `sink` over `input` (the function of `uid`'s output); a
    /// planning error for what it cannot write.
    pub fn try_new(sink: &DataSinkExec, input: Arc<dyn ExecutionPlan>, uid: &str) -> Result<Self> {
        let data_sink = sink.sink();
        let (config, format) = if let Some(csv) = data_sink.downcast_ref::<CsvSink>() {
            let options = csv.writer_options();
            if options.compression
                != datafusion::common::parsers::CompressionTypeVariant::UNCOMPRESSED
            {
                return plan_err!(
                    "checkpoints are on, and the committing sink writes CSV uncompressed only (the table asks for {:?})",
                    options.compression
                );
            }
            (csv.config(), Format::Csv(options.writer_options.clone()))
        } else if let Some(parquet) = data_sink.downcast_ref::<ParquetSink>() {
            // As DataFusion's own sink does: the Arrow schema goes into the file's metadata.
            let mut options = parquet.parquet_options().clone();
            options.arrow_schema(parquet.config().output_schema());
            let options = ParquetWriterOptions::try_from(&options)?;
            (
                parquet.config(),
                Format::Parquet(options.writer_options().clone()),
            )
        } else {
            return plan_err!(
                "checkpoints are on, but `INSERT INTO` this table cannot commit with them: the committing sink writes CSV and Parquet tables"
            );
        };
        if config.insert_op != InsertOp::Append {
            return plan_err!(
                "checkpoints are on, and the committing sink appends only (`INSERT INTO`, not {:?})",
                config.insert_op
            );
        }
        if !config.table_partition_cols.is_empty() {
            return plan_err!(
                "checkpoints are on, and the committing sink writes tables without partition columns only"
            );
        }
        let [url] = config.table_paths.as_slice() else {
            return plan_err!("the committing sink writes a table of one directory");
        };
        let dir = url.get_url().to_file_path().map_err(|()| {
            DataFusionError::Plan(format!(
                "checkpoints are on, and the committing sink writes local directories only, not {url}"
            ))
        })?;
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(count_schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        Ok(CommittingSinkExec {
            input,
            dir,
            format,
            table_schema: config.output_schema().clone(),
            uid: uid.to_owned(),
            properties,
        })
    }

    /// The committed name of partition `partition`'s file of checkpoint `id`.
    fn committed(&self, id: u64, partition: usize) -> PathBuf {
        self.dir.join(format!(
            "part-{}-{id:08}-{partition}.{}",
            self.uid,
            self.format.extension()
        ))
    }
}

/// The hidden in-progress files of `uid` in `dir` start so (readers list by extension, and
/// these end in `.inprogress`).
fn in_progress_prefix(uid: &str) -> String {
    format!(".part-{uid}-")
}

/// Removes the in-progress files of `uid` in `dir`: what a run that crashed wrote after its
/// last complete checkpoint (the restore has committed what that checkpoint covers).
fn remove_orphans(dir: &Path, uid: &str) -> Result<()> {
    let prefix = in_progress_prefix(uid);
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return exec_err!("output directory {} does not read: {e}", dir.display()),
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(&prefix) && name.ends_with(".inprogress") {
            std::fs::remove_file(entry.path()).map_err(|e| {
                DataFusionError::Execution(format!(
                    "uncommitted output file {} could not be removed: {e}",
                    entry.path().display()
                ))
            })?;
        }
    }
    Ok(())
}

/// What one partition wrote.
struct Written {
    rows: u64,
    /// The last barrier it passed: the final checkpoint, or the savepoint that stopped it.
    last: Option<Barrier>,
}

impl CommittingSinkExec {
    /// Writes partition `partition`'s rows: a file per checkpoint, handed to it at the barrier.
    async fn write_partition(
        self: Arc<Self>,
        partition: usize,
        mut flow: BoxStream<'static, Result<Flow>>,
    ) -> Result<Written> {
        let mut file: Option<PartFile> = None;
        let mut written = Written {
            rows: 0,
            last: None,
        };
        while let Some(message) = flow.next().await {
            match message? {
                Flow::Rows(batch) => {
                    if batch.num_rows() == 0 {
                        continue;
                    }
                    if file.is_none() {
                        file = Some(PartFile::create(
                            self.in_progress(partition),
                            &self.format,
                            self.table_schema.clone(),
                        )?);
                    }
                    file.as_mut().expect("just made").write(&batch)?;
                    written.rows += batch.num_rows() as u64;
                }
                Flow::Barrier(barrier) => {
                    let mut finished = Vec::new();
                    if let Some(done) = file.take() {
                        finished.push(SinkFile {
                            in_progress: done.finish()?,
                            committed: self.committed(barrier.id, partition),
                        });
                    }
                    barrier.pending.sink(partition, finished);
                    written.last = Some(barrier);
                }
            }
        }
        Ok(written)
    }

    fn in_progress(&self, partition: usize) -> PathBuf {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        self.dir.join(format!(
            "{}{partition}-{}-{nanos}.{}.inprogress",
            in_progress_prefix(&self.uid),
            std::process::id(),
            self.format.extension()
        ))
    }

    async fn run(
        self: Arc<Self>,
        flows: Vec<BoxStream<'static, Result<Flow>>>,
    ) -> Result<RecordBatch> {
        let tasks: Vec<_> = flows
            .into_iter()
            .enumerate()
            .map(|(partition, flow)| {
                SpawnedTask::spawn(self.clone().write_partition(partition, flow))
            })
            .collect();
        let mut rows = 0;
        let mut last: Option<Barrier> = None;
        for task in tasks {
            let written = task.join().await.map_err(|e| {
                DataFusionError::Execution(format!("a sink partition failed: {e}"))
            })??;
            rows += written.rows;
            if let Some(barrier) = written.last
                && last.as_ref().is_none_or(|l| l.id < barrier.id)
            {
                last = Some(barrier);
            }
        }
        let Some(last) = last else {
            return exec_err!(
                "the query ended without a checkpoint covering its output, so none of it was committed"
            );
        };
        let mut outcome = last.pending.outcome();
        let outcome = outcome
            .wait_for(Option::is_some)
            .await
            .map_err(|_| DataFusionError::Execution("the final checkpoint was dropped".into()))?
            .clone()
            .expect("waited for it");
        match outcome {
            Outcome::Complete { .. } => Ok(RecordBatch::try_new(
                count_schema(),
                vec![Arc::new(UInt64Array::from(vec![rows]))],
            )?),
            Outcome::Failed(reason) => exec_err!(
                "checkpoint {} failed, so the output after the one before it is not committed: {reason}",
                last.id
            ),
            Outcome::Abandoned => exec_err!(
                "checkpoint {} was abandoned, so the output after the one before it is not committed",
                last.id
            ),
        }
    }
}

impl DisplayAs for CommittingSinkExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "CommittingSinkExec: dir={}, format={}, files committed at checkpoints of uid {}",
            self.dir.display(),
            self.format.extension(),
            self.uid
        )
    }
}

impl ExecutionPlan for CommittingSinkExec {
    fn name(&self) -> &str {
        "CommittingSinkExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
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
        let [input] = children
            .try_into()
            .map_err(|_| DataFusionError::Internal("CommittingSinkExec takes one input".into()))?;
        Ok(Arc::new(CommittingSinkExec {
            input,
            ..self.as_ref().clone()
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return internal_err!(
                "CommittingSinkExec has one partition, not {}",
                partition + 1
            );
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| {
            DataFusionError::Execution(format!(
                "output directory {} could not be made: {e}",
                self.dir.display()
            ))
        })?;
        // Starting the function's processors makes the run's coordinator, which commits what
        // a restored checkpoint covers; what is left in progress after that is orphaned.
        let partitions = self.input.output_partitioning().partition_count();
        let flows = (0..partitions)
            .map(|p| input::flow(&self.input, p, context.clone()))
            .collect::<Result<Vec<_>>>()?;
        remove_orphans(&self.dir, &self.uid)?;
        let stream = futures::stream::once(Arc::new(self.clone()).run(flows));
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            count_schema(),
            stream,
        )))
    }
}
