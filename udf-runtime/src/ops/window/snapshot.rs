//! Checkpoints of a window aggregate's processor: the watermark of each input partition and
//! the open windows — one row per window and group, `start`, `end`, the key columns and one
//! column per aggregate call with its accumulators as the call saves them — in the Arrow IPC
//! stream format. Fixed windows (`panes.rs`) and sessions (`sessions.rs`) share it: a
//! session is a window of its own. Windows that fired are gone; a row for one after the
//! restore is late, as it would have been.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::common::{Result, exec_datafusion_err, exec_err};
use serde::{Deserialize, Serialize};

use crate::streaming::state::KeepKeys;
use crate::streaming::watermarks::SourceWatermarks;

/// Changes whenever the layout changes.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Saved {
    format: u32,
    watermarks: SourceWatermarks,
    /// The open windows (empty when none is open).
    windows: Vec<u8>,
}

/// A processor's saved state, read back.
pub(super) struct Restored {
    pub watermarks: SourceWatermarks,
    /// Open windows as saved, the rows whose keys are not this processor's left out.
    pub windows: Vec<OpenWindows>,
}

/// Rows of open windows: one per window and group.
pub(super) struct OpenWindows {
    pub starts: Vec<i64>,
    pub ends: Vec<i64>,
    pub keys: Vec<ArrayRef>,
    /// Each call's saved accumulators.
    pub calls: Vec<ArrayRef>,
}

impl OpenWindows {
    pub fn rows(&self) -> usize {
        self.starts.len()
    }

    /// Ranges of rows of one window each (rows of a window are saved together).
    pub fn by_window(&self) -> Vec<std::ops::Range<usize>> {
        let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
        for row in 0..self.rows() {
            match ranges.last_mut() {
                Some(last)
                    if self.starts[last.start] == self.starts[row]
                        && self.ends[last.start] == self.ends[row] =>
                {
                    last.end = row + 1
                }
                _ => ranges.push(row..row + 1),
            }
        }
        ranges
    }
}

/// The bytes of a processor's state.
pub(super) fn write(watermarks: &SourceWatermarks, windows: &[OpenWindows]) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if let Some(first) = windows.first() {
        let schema = Arc::new(schema_of(first));
        let mut writer = StreamWriter::try_new(&mut bytes, &schema)?;
        for open in windows {
            let mut columns: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from(open.starts.clone())),
                Arc::new(Int64Array::from(open.ends.clone())),
            ];
            columns.extend(open.keys.iter().cloned());
            columns.extend(open.calls.iter().cloned());
            writer.write(&RecordBatch::try_new(schema.clone(), columns)?)?;
        }
        writer.finish()?;
    }
    let saved = Saved {
        format: FORMAT,
        watermarks: watermarks.clone(),
        windows: bytes,
    };
    postcard::to_allocvec(&saved)
        .map_err(|e| exec_datafusion_err!("the open windows cannot be encoded: {e}"))
}

fn schema_of(open: &OpenWindows) -> Schema {
    let mut fields = vec![
        Field::new("start", DataType::Int64, false),
        Field::new("end", DataType::Int64, false),
    ];
    for (index, key) in open.keys.iter().enumerate() {
        fields.push(Field::new(
            format!("key{index}"),
            key.data_type().clone(),
            true,
        ));
    }
    for (index, call) in open.calls.iter().enumerate() {
        fields.push(Field::new(
            format!("call{index}"),
            call.data_type().clone(),
            true,
        ));
    }
    Schema::new(fields)
}

/// A processor's state of `width` keys and `calls` aggregate calls; only the rows whose
/// keys `keep` says are this processor's, when given.
pub(super) fn read(
    bytes: &[u8],
    width: usize,
    calls: usize,
    keep: Option<&KeepKeys<'_>>,
) -> Result<Restored> {
    let saved: Saved = postcard::from_bytes(bytes)
        .map_err(|e| exec_datafusion_err!("the saved windows do not read: {e}"))?;
    if saved.format != FORMAT {
        return exec_err!(
            "the saved windows have format {}, this build reads format {FORMAT}",
            saved.format
        );
    }
    let mut windows = Vec::new();
    if !saved.windows.is_empty() {
        let reader = StreamReader::try_new(saved.windows.as_slice(), None)
            .map_err(|e| exec_datafusion_err!("the saved windows do not read: {e}"))?;
        for batch in reader {
            let batch =
                batch.map_err(|e| exec_datafusion_err!("the saved windows do not read: {e}"))?;
            windows.push(open_windows(batch, width, calls, keep)?);
        }
    }
    Ok(Restored {
        watermarks: saved.watermarks,
        windows,
    })
}

fn open_windows(
    batch: RecordBatch,
    width: usize,
    calls: usize,
    keep: Option<&KeepKeys<'_>>,
) -> Result<OpenWindows> {
    let expected = 2 + width + calls;
    if batch.num_columns() != expected {
        return exec_err!(
            "the saved windows have {} columns, this window aggregate needs {expected} (start, end, {width} keys, {calls} aggregate calls): was the snapshot taken of another query?",
            batch.num_columns()
        );
    }
    let batch = match keep {
        Some(keep) => {
            let kept = keep(&batch.columns()[2..2 + width], batch.num_rows())?;
            filter_record_batch(&batch, &kept.into())?
        }
        None => batch,
    };
    let bound = |index: usize| -> Result<Vec<i64>> {
        let column = batch.column(index);
        match column.as_primitive_opt::<Int64Type>() {
            Some(values) if values.null_count() == 0 => Ok(values.values().to_vec()),
            _ => exec_err!("the saved window bounds are {}", column.data_type()),
        }
    };
    Ok(OpenWindows {
        starts: bound(0)?,
        ends: bound(1)?,
        keys: batch.columns()[2..2 + width].to_vec(),
        calls: batch.columns()[2 + width..].to_vec(),
    })
}
