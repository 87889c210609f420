//! One in-progress output file: CSV or Parquet, written batch by batch and synced when
//! finished, ready to be renamed into place.

use std::fs::File;
use std::path::{Path, PathBuf};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::csv::WriterBuilder;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::file::properties::WriterProperties;

/// How the table's files are written.
#[derive(Debug, Clone)]
pub enum Format {
    Csv(WriterBuilder),
    Parquet(WriterProperties),
}

impl Format {
    pub fn extension(&self) -> &'static str {
        match self {
            Format::Csv(_) => "csv",
            Format::Parquet(_) => "parquet",
        }
    }
}

/// Boxed: a file is made once per checkpoint and partition, and the writers' sizes differ.
enum Writer {
    Csv(Box<datafusion::arrow::csv::Writer<File>>),
    Parquet(Box<ArrowWriter<File>>),
}

pub struct PartFile {
    path: PathBuf,
    schema: SchemaRef,
    writer: Writer,
}

fn failed(path: &Path, what: &str, error: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!(
        "output file {} could not be {what}: {error}",
        path.display()
    ))
}

impl PartFile {
    pub fn create(path: PathBuf, format: &Format, schema: SchemaRef) -> Result<Self> {
        let file = File::create(&path).map_err(|e| failed(&path, "created", e))?;
        let writer = match format {
            Format::Csv(builder) => Writer::Csv(Box::new(builder.clone().build(file))),
            Format::Parquet(properties) => Writer::Parquet(Box::new(
                ArrowWriter::try_new(file, schema.clone(), Some(properties.clone()))
                    .map_err(|e| failed(&path, "created", e))?,
            )),
        };
        Ok(PartFile {
            path,
            schema,
            writer,
        })
    }

    /// Writes `batch`, its columns taken as the table's.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let batch = RecordBatch::try_new(self.schema.clone(), batch.columns().to_vec())
            .map_err(|e| failed(&self.path, "written (its rows are not the table's)", e))?;
        match &mut self.writer {
            Writer::Csv(writer) => writer
                .write(&batch)
                .map_err(|e| failed(&self.path, "written", e)),
            Writer::Parquet(writer) => writer
                .write(&batch)
                .map_err(|e| failed(&self.path, "written", e)),
        }
    }

    /// Finishes the file and syncs it to disk; gives its path.
    pub fn finish(self) -> Result<PathBuf> {
        let path = self.path;
        let file = match self.writer {
            Writer::Csv(writer) => writer.into_inner(),
            Writer::Parquet(writer) => writer
                .into_inner()
                .map_err(|e| failed(&path, "finished", e))?,
        };
        file.sync_all().map_err(|e| failed(&path, "synced", e))?;
        Ok(path)
    }
}
