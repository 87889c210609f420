//! File scans (CSV, NDJSON, Parquet, a directory of them) as replayable sources.
//!
//! DataFusion's scan reads each partition's files one after another, but its partitions take
//! files from one another when idle, so the rows a partition read say nothing about where it
//! stands. Here each file of a partition is read on its own, in order, by a scan of that one
//! file (the same columns, pushed-down filters and format options), and the partition's
//! place is the file's index, its path and the rows read of it. A restore checks that the
//! same files come first, skips the files before it without opening them and the rows
//! already read of it.

use std::any::Any;
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{Result, exec_err};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfig, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use futures::StreamExt;

use super::files::crc32;
use super::lock;
use super::manifest::FilePosition;

/// Where a partition of a file scan stands: set as it yields rows, read when it emits a
/// barrier (both on the source's task, between batches).
#[derive(Clone, Default)]
pub struct FileCursor(Arc<Mutex<Option<FilePosition>>>);

impl FileCursor {
    pub fn position(&self) -> Option<FilePosition> {
        lock(&self.0).clone()
    }

    fn set(&self, position: FilePosition) {
        *lock(&self.0) = Some(position);
    }

    /// Rows read of the current file (set when it was opened).
    fn set_rows(&self, rows: u64) {
        if let Some(position) = lock(&self.0).as_mut() {
            position.rows = rows;
        }
    }
}

/// The files `plan` scans, if it is a file scan.
pub fn file_scan(plan: &dyn ExecutionPlan) -> Option<&FileScanConfig> {
    let scan = (plan as &dyn Any).downcast_ref::<DataSourceExec>()?;
    (scan.data_source().as_ref() as &dyn Any).downcast_ref::<FileScanConfig>()
}

/// Why the file scan cannot be replayed, if it cannot.
pub fn refusal(config: &FileScanConfig) -> Option<String> {
    config.limit.map(|limit| {
        format!(
            "the scan of `{}` stops after {limit} rows (a LIMIT pushed into it), which a file-by-file replay cannot keep",
            label(config)
        )
    })
}

/// What the scan reads, for positions and messages: the directory its files share.
pub fn label(config: &FileScanConfig) -> String {
    let mut paths = config
        .file_groups
        .iter()
        .flat_map(|group| group.iter())
        .map(|file| file.object_meta.location.as_ref());
    let Some(first) = paths.next() else {
        return config.object_store_url.to_string();
    };
    let mut shared = first.len();
    for path in paths {
        shared = first
            .bytes()
            .zip(path.bytes())
            .take(shared)
            .take_while(|(a, b)| a == b)
            .count();
    }
    // Whole path components only.
    let common = &first[..shared];
    let directory = if shared == first.len() {
        common
    } else {
        common.rfind('/').map_or("", |end| &common[..=end])
    };
    format!("{}{directory}", config.object_store_url.as_str())
}

/// The digest of the paths of `files` (a restore's check that the same files come first).
fn digest(files: &[PartitionedFile]) -> u32 {
    let mut paths = String::new();
    for file in files {
        paths.push_str(file.object_meta.location.as_ref());
        paths.push('\n');
    }
    crc32(paths.as_bytes())
}

struct Reading {
    config: FileScanConfig,
    files: Vec<PartitionedFile>,
    context: Arc<TaskContext>,
    cursor: FileCursor,
    /// The file being read and its rows.
    current: Option<SendableRecordBatchStream>,
    index: usize,
    rows: u64,
    /// Rows of the current file still to pass over (read before the restored checkpoint).
    skip: u64,
}

/// Partition `partition` of the scan `config` (whose rows have schema `schema`), file by
/// file from `restored` on, telling `cursor` where it stands.
pub fn batches(
    config: &FileScanConfig,
    schema: SchemaRef,
    partition: usize,
    context: Arc<TaskContext>,
    restored: Option<&FilePosition>,
    cursor: FileCursor,
) -> Result<SendableRecordBatchStream> {
    let files: Vec<PartitionedFile> = config
        .file_groups
        .get(partition)
        .map(|group| group.files().to_vec())
        .unwrap_or_default();
    let (index, skip) = match restored {
        None => (0, 0),
        Some(at) => {
            let same = files
                .get(at.index)
                .is_some_and(|file| file.object_meta.location.as_ref() == at.path)
                && digest(&files[..at.index]) == at.before;
            if !same {
                return exec_err!(
                    "the files of `{}` changed since the checkpoint: partition {partition} was reading `{}` (its file {} of {}), which {}",
                    label(config),
                    at.path,
                    at.index + 1,
                    files.len().max(at.index + 1),
                    if files
                        .iter()
                        .any(|f| f.object_meta.location.as_ref() == at.path)
                    {
                        "now has other files before it"
                    } else {
                        "it no longer reads"
                    }
                );
            }
            (at.index, at.rows)
        }
    };
    let reading = Reading {
        config: config.clone(),
        files,
        context,
        cursor,
        current: None,
        index,
        rows: 0,
        skip,
    };
    let stream = futures::stream::try_unfold(reading, |mut reading| async move {
        loop {
            if reading.current.is_none() {
                let Some(file) = reading.files.get(reading.index) else {
                    return Ok(None);
                };
                let one = FileScanConfigBuilder::from(reading.config.clone())
                    .with_file_groups(vec![FileGroup::new(vec![file.clone()])])
                    .build();
                let scan = DataSourceExec::from_data_source(one);
                reading.current = Some(scan.execute(0, reading.context.clone())?);
                reading.rows = 0;
                reading.opened();
            }
            let current = reading.current.as_mut().expect("opened above");
            match current.next().await {
                Some(batch) => {
                    let mut batch = batch?;
                    let rows = batch.num_rows() as u64;
                    reading.rows += rows;
                    if reading.skip > 0 {
                        let skipped = reading.skip.min(rows);
                        reading.skip -= skipped;
                        batch = batch.slice(skipped as usize, (rows - skipped) as usize);
                    }
                    reading.cursor.set_rows(reading.rows);
                    if batch.num_rows() > 0 {
                        return Ok(Some((batch, reading)));
                    }
                }
                None => {
                    if reading.skip > 0 {
                        return exec_err!(
                            "the file `{}` has fewer rows than the checkpoint read of it ({} more were read): it changed since",
                            reading.files[reading.index].object_meta.location,
                            reading.skip
                        );
                    }
                    reading.current = None;
                    reading.index += 1;
                }
            }
        }
    });
    Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
}

impl Reading {
    /// Tells the cursor the file just opened (its rows are counted as they come).
    fn opened(&self) {
        self.cursor.set(FilePosition {
            index: self.index,
            path: self.files[self.index].object_meta.location.to_string(),
            rows: 0,
            before: digest(&self.files[..self.index]),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_digest_in_order() {
        let file = |path: &str| PartitionedFile::new(path.to_owned(), 10);
        let ab = digest(&[file("a"), file("b")]);
        assert_eq!(ab, digest(&[file("a"), file("b")]));
        assert_ne!(ab, digest(&[file("b"), file("a")]));
        assert_ne!(ab, digest(&[file("a")]));
    }
}
