//! Flink's `debezium-json` format read into a changelog: one JSON object per line with
//! `before`, `after` and `op` (or the same inside `payload`, Debezium's envelope with its
//! schema). `op` `c` (create) and `r` (snapshot read) give `+I after`, `u` gives `-U before`
//! then `+U after`, `d` gives `-D before`. Fields other than these are ignored.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StructArray};
use datafusion::arrow::compute::interleave;
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use datafusion::arrow::json::ReaderBuilder;
use datafusion::common::{DataFusionError, Result, exec_err, plan_err};
use udf_core::RowKind;

use super::{kinds_array, with_row_kind};

/// The changelog the files at `path` (a file, or a directory of them read in name order)
/// hold, as rows of `schema` with the row-kind column.
pub fn read(path: &Path, schema: &SchemaRef) -> Result<RecordBatch> {
    let files = files(path)?;
    let row = DataType::Struct(schema.fields().clone());
    let change = Fields::from(vec![
        Field::new("before", row.clone(), true),
        Field::new("after", row, true),
        Field::new("op", DataType::Utf8, true),
    ]);
    let mut envelope: Vec<Field> = change.iter().map(|f| f.as_ref().clone()).collect();
    envelope.push(Field::new("payload", DataType::Struct(change), true));
    let envelope = Arc::new(Schema::new(envelope));

    let mut parts = Vec::new();
    let mut picks = Vec::new();
    let mut kinds = Vec::new();
    for file in &files {
        let text = std::fs::read(file)
            .map_err(|e| DataFusionError::Execution(format!("{}: {e}", file.display())))?;
        // Line numbers of the objects, for errors.
        let lines: Vec<usize> = text
            .split(|&b| b == b'\n')
            .enumerate()
            .filter(|(_, line)| line.iter().any(|b| !b.is_ascii_whitespace()))
            .map(|(number, _)| number + 1)
            .collect();
        let reader = ReaderBuilder::new(envelope.clone())
            .with_batch_size(lines.len().max(1))
            .build(text.as_slice())?;
        let mut row = 0;
        for batch in reader {
            let batch = batch.map_err(|e| {
                DataFusionError::Execution(format!("{} is not debezium-json: {e}", file.display()))
            })?;
            let payload = batch.column(3).as_struct();
            // The batch's sides, once: before and after at the top, then in `payload`.
            let base = parts.len();
            parts.extend(batch.columns()[..2].iter().cloned());
            parts.extend(payload.columns()[..2].iter().cloned());
            for at in 0..batch.num_rows() {
                let line = lines.get(row).copied().unwrap_or(row + 1);
                row += 1;
                let (change, first) = if payload.is_valid(at) {
                    (payload.columns(), base + 2)
                } else {
                    (&batch.columns()[..3], base)
                };
                let op = change[2].as_string::<i32>();
                let side = |column: usize, name: &str| -> Result<(usize, usize)> {
                    if change[column].is_null(at) {
                        return exec_err!(
                            "line {line} of {} has op `{}` without `{name}`{}",
                            file.display(),
                            op.value(at),
                            if name == "before" {
                                " (Debezium leaves it out unless the source table keeps full row images: for PostgreSQL, REPLICA IDENTITY FULL)"
                            } else {
                                ""
                            }
                        );
                    }
                    Ok((first + column, at))
                };
                let op_value = if op.is_valid(at) { op.value(at) } else { "" };
                match op_value {
                    "c" | "r" => {
                        picks.push(side(1, "after")?);
                        kinds.push(RowKind::Insert);
                    }
                    "u" => {
                        picks.push(side(0, "before")?);
                        kinds.push(RowKind::UpdateBefore);
                        picks.push(side(1, "after")?);
                        kinds.push(RowKind::UpdateAfter);
                    }
                    "d" => {
                        picks.push(side(0, "before")?);
                        kinds.push(RowKind::Delete);
                    }
                    other => {
                        return exec_err!(
                            "line {line} of {} has op `{other}`; debezium-json knows c, r, u and d",
                            file.display()
                        );
                    }
                }
            }
        }
    }
    let output = Arc::new(with_row_kind(schema));
    if picks.is_empty() {
        return Ok(RecordBatch::new_empty(output));
    }
    let sources: Vec<&dyn Array> = parts.iter().map(|p| p.as_ref()).collect();
    let rows = interleave(&sources, &picks)?;
    let rows: &StructArray = rows.as_struct();
    let mut columns: Vec<ArrayRef> = rows.columns().to_vec();
    columns.push(kinds_array(&kinds));
    Ok(RecordBatch::try_new(output, columns)?)
}

/// The file, or the files of the directory in name order.
fn files(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return plan_err!("no debezium-json file or directory at {}", path.display());
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}
