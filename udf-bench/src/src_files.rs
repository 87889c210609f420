//! `src` as Parquet files (one per partition) in a directory of the run's own: what the
//! cluster's executors read, and what the `_files` workloads read on the local session to
//! tell the files' cost from the cluster's.

use std::path::PathBuf;

use udf_runtime::Session;
use udf_runtime::datafusion::arrow::record_batch::RecordBatch;
use udf_runtime::datafusion::config::TableParquetOptions;
use udf_runtime::datafusion::dataframe::DataFrameWriteOptions;
use udf_runtime::datafusion::error::Result;
use udf_runtime::datafusion::prelude::{ParquetReadOptions, SessionConfig};

/// The files, written once per input size; the directory goes when this is dropped.
pub struct SrcFiles {
    dir: PathBuf,
    written: Option<(u64, usize)>,
}

impl SrcFiles {
    /// Files under a new directory `udf-bench-<what>-<pid>` in the system's temporary one.
    pub fn new(what: &str) -> Result<SrcFiles> {
        let dir = std::env::temp_dir().join(format!("udf-bench-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(SrcFiles { dir, written: None })
    }

    /// The directory, for other files of the run.
    pub fn dir(&self) -> &PathBuf {
        &self.dir
    }

    /// Registers `src` (ids 1..=rows in `partitions` files) in `session`, writing the files
    /// first if they hold another size.
    pub async fn register(
        &mut self,
        session: &Session,
        rows: u64,
        partitions: usize,
    ) -> Result<()> {
        let src = self.dir.join("src");
        if self.written != Some((rows, partitions)) {
            let _ = std::fs::remove_dir_all(&src);
            std::fs::create_dir_all(&src)?;
            // A file per partition, written from that partition alone so its rows keep
            // their order (a directory write deals batches to its files as they come).
            let local = Session::with_config(SessionConfig::new().with_target_partitions(1));
            let (schema, parts) = crate::source::partitioned(rows, partitions)?;
            for (index, mut part) in parts.into_iter().enumerate() {
                // A partition without rows (fewer batches than partitions) is still a file
                // with `src`'s columns: without a batch it would have none.
                if part.is_empty() {
                    part.push(RecordBatch::new_empty(schema.clone()));
                }
                let file = src.join(format!("part-{index}.parquet"));
                local
                    .context()
                    .read_batches(part)?
                    .write_parquet(
                        &file.to_string_lossy(),
                        DataFrameWriteOptions::new().with_single_file_output(true),
                        Some(uncompressed()),
                    )
                    .await?;
            }
            self.written = Some((rows, partitions));
        }
        // One file per partition, each read whole and in order: a split file would put its
        // later rows before an earlier part of another file in one partition, late for the
        // event-time workloads.
        session
            .sql("SET datafusion.optimizer.repartition_file_scans = false")
            .await?;
        session
            .register_parquet("src", src.to_string_lossy(), ParquetReadOptions::default())
            .await
    }
}

/// Parquet written without compression: the workloads measure the functions and the
/// cluster, not the decompression of their input.
fn uncompressed() -> TableParquetOptions {
    let mut options = TableParquetOptions::default();
    options.global.compression = Some("uncompressed".to_owned());
    options
}

impl Drop for SrcFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
