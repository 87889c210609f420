//! ORDER BY on a set-semantics table (rule 31): rows wait, per key, until the watermark
//! passes their time, then go to `eval` in (time, more ORDER BY columns) order, key by key.

use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{SortOptions, interleave_record_batch, take_record_batch};
use datafusion::arrow::datatypes::DataType as ArrowType;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::Result;

/// One waiting row.
struct Waiting {
    /// Key, time and tie columns in Arrow's row format: sorting the bytes sorts the rows.
    order: Box<[u8]>,
    time: i64,
    chunk: usize,
    row: usize,
}

pub struct SortBuffer {
    converter: RowConverter,
    chunks: Vec<RecordBatch>,
    waiting: Vec<Waiting>,
}

impl SortBuffer {
    /// Rows are ordered by `key_types`, then the time, then `ties`.
    pub fn new(key_types: &[ArrowType], ties: &[(ArrowType, SortOptions)]) -> Result<Self> {
        let mut fields: Vec<SortField> = key_types.iter().cloned().map(SortField::new).collect();
        fields.push(SortField::new(ArrowType::Int64));
        fields.extend(
            ties.iter().map(|(data_type, options)| {
                SortField::new_with_options(data_type.clone(), *options)
            }),
        );
        Ok(SortBuffer {
            converter: RowConverter::new(fields)?,
            chunks: Vec::new(),
            waiting: Vec::new(),
        })
    }

    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Adds `rows` of `batch` (whose `keys`, `times` and `ties` columns are given for the
    /// whole batch).
    pub fn insert(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        keys: &[ArrayRef],
        times: &[i64],
        ties: &[ArrayRef],
    ) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let indices = UInt32Array::from(rows.to_vec());
        let chunk = take_record_batch(batch, &indices)?;
        let picked_times: Vec<i64> = rows.iter().map(|&r| times[r as usize]).collect();
        let mut columns: Vec<ArrayRef> = keys
            .iter()
            .map(|k| datafusion::arrow::compute::take(k, &indices, None))
            .collect::<std::result::Result<_, _>>()?;
        columns.push(std::sync::Arc::new(Int64Array::from(picked_times.clone())));
        for tie in ties {
            columns.push(datafusion::arrow::compute::take(tie, &indices, None)?);
        }
        let order = self.converter.convert_columns(&columns)?;
        let chunk_index = self.chunks.len();
        self.chunks.push(chunk);
        for (row, time) in picked_times.into_iter().enumerate() {
            self.waiting.push(Waiting {
                order: order.row(row).as_ref().into(),
                time,
                chunk: chunk_index,
                row,
            });
        }
        Ok(())
    }

    /// The rows with time ≤ `watermark`, in order, with their times; they leave the buffer.
    pub fn release(&mut self, watermark: i64) -> Result<Option<(RecordBatch, Vec<i64>)>> {
        let (mut due, keep): (Vec<Waiting>, Vec<Waiting>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| w.time <= watermark);
        self.waiting = keep;
        if due.is_empty() {
            return Ok(None);
        }
        // Stable: rows equal in every ORDER BY column keep their arrival order.
        due.sort_by(|a, b| a.order.cmp(&b.order));
        let chunks: Vec<&RecordBatch> = self.chunks.iter().collect();
        let indices: Vec<(usize, usize)> = due.iter().map(|w| (w.chunk, w.row)).collect();
        let released = interleave_record_batch(&chunks, &indices)?;
        let times = due.iter().map(|w| w.time).collect();
        self.compact()?;
        Ok(Some((released, times)))
    }

    /// Drops chunks no waiting row refers to, copying the waiting rows together when they
    /// are spread over many chunks.
    fn compact(&mut self) -> Result<()> {
        if self.waiting.is_empty() {
            self.chunks.clear();
            return Ok(());
        }
        if self.chunks.len() < 16 {
            return Ok(());
        }
        let chunks: Vec<&RecordBatch> = self.chunks.iter().collect();
        let indices: Vec<(usize, usize)> = self.waiting.iter().map(|w| (w.chunk, w.row)).collect();
        let merged = interleave_record_batch(&chunks, &indices)?;
        for (row, waiting) in self.waiting.iter_mut().enumerate() {
            waiting.chunk = 0;
            waiting.row = row;
        }
        self.chunks = vec![merged];
        Ok(())
    }
}
