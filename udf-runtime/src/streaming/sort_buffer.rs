//! ORDER BY on a set-semantics table (rule 31 of docs/semantics.md): rows wait, per key, until the watermark
//! passes their time, then go to `eval` in (time, more ORDER BY columns) order, key by key.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, UInt32Array};
use datafusion::arrow::buffer::ScalarBuffer;
use datafusion::arrow::compute::{SortOptions, interleave_record_batch, take, take_record_batch};
use datafusion::arrow::datatypes::DataType as ArrowType;
use datafusion::arrow::row::{RowConverter, Rows, SortField};
use datafusion::common::Result;
use datafusion::physical_expr::PhysicalExpr;

/// Rows inserted together, and their key, time and tie columns in Arrow's row format
/// (comparing the bytes compares the rows).
struct Chunk {
    batch: RecordBatch,
    order: Rows,
    /// The rows by time (arrival order among equal times), and their times.
    by_time: Vec<u32>,
    times: ScalarBuffer<i64>,
    /// How many of `by_time` have left.
    released: usize,
}

/// Rows released by a run of watermark advances: in the order of the advance that passed
/// them, then in ORDER BY order.
pub struct Released {
    pub batch: RecordBatch,
    pub times: Vec<i64>,
    /// For each row, the advance (an index into the watermarks given) that passed it.
    pub advances: Vec<usize>,
}

/// Waiting rows, in chunks sorted by time, and a heap of the chunks by their earliest
/// waiting row: releasing costs about what is released, however many rows wait (a batch
/// of an in-order input is sorted already).
pub struct SortBuffer {
    /// The PARTITION BY keys, evaluated over the input rows.
    keys: Vec<Arc<dyn PhysicalExpr>>,
    /// The input columns of the ORDER BY ties (the columns after the time).
    ties: Vec<usize>,
    converter: RowConverter,
    /// By number (in arrival order); `None` once none of its rows waits.
    chunks: Vec<Option<Chunk>>,
    live_chunks: usize,
    /// (earliest waiting time, chunk number) of every chunk with waiting rows.
    queue: BinaryHeap<Reverse<(i64, u32)>>,
    waiting: usize,
}

impl SortBuffer {
    /// Rows are ordered by `keys` (of `key_types`), then the time, then the input columns
    /// `ties` (column, type, order).
    pub fn new(
        keys: Vec<Arc<dyn PhysicalExpr>>,
        key_types: &[ArrowType],
        ties: &[(usize, ArrowType, SortOptions)],
    ) -> Result<Self> {
        let mut fields: Vec<SortField> = key_types.iter().cloned().map(SortField::new).collect();
        fields.push(SortField::new(ArrowType::Int64));
        fields.extend(ties.iter().map(|(_, data_type, options)| {
            SortField::new_with_options(data_type.clone(), *options)
        }));
        Ok(SortBuffer {
            keys,
            ties: ties.iter().map(|(column, _, _)| *column).collect(),
            converter: RowConverter::new(fields)?,
            chunks: Vec::new(),
            live_chunks: 0,
            queue: BinaryHeap::new(),
            waiting: 0,
        })
    }

    pub fn len(&self) -> usize {
        self.waiting
    }

    /// Adds `rows` of `batch` (`times` has the time of every row of the batch).
    pub fn insert(&mut self, batch: &RecordBatch, rows: &[u32], times: &[i64]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let keys = self
            .keys
            .iter()
            .map(|k| k.evaluate(batch)?.into_array(batch.num_rows()))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let ties: Vec<ArrayRef> = self.ties.iter().map(|&c| batch.column(c).clone()).collect();
        let all = rows.len() == batch.num_rows();
        let indices = UInt32Array::from(rows.to_vec());
        let pick = |column: &ArrayRef| -> Result<ArrayRef> {
            Ok(if all {
                column.clone()
            } else {
                take(column, &indices, None)?
            })
        };
        let chunk = if all {
            batch.clone()
        } else {
            take_record_batch(batch, &indices)?
        };
        let picked_times = Int64Array::from_iter_values(rows.iter().map(|&r| times[r as usize]))
            .into_parts()
            .1;
        let mut columns = keys.iter().map(pick).collect::<Result<Vec<_>>>()?;
        columns.push(std::sync::Arc::new(Int64Array::new(
            picked_times.clone(),
            None,
        )));
        for tie in &ties {
            columns.push(pick(tie)?);
        }
        let order = self.converter.convert_columns(&columns)?;
        let mut by_time: Vec<u32> = (0..rows.len() as u32).collect();
        // A batch of an in-order input keeps its times as they are.
        let times = if picked_times.is_sorted() {
            picked_times
        } else {
            by_time.sort_by_key(|&row| picked_times[row as usize]);
            by_time.iter().map(|&r| picked_times[r as usize]).collect()
        };
        let number = self.chunks.len() as u32;
        self.queue.push(Reverse((times[0], number)));
        self.waiting += rows.len();
        self.chunks.push(Some(Chunk {
            batch: chunk,
            order,
            by_time,
            times,
            released: 0,
        }));
        self.live_chunks += 1;
        Ok(())
    }

    /// Every waiting row, in arrival order, with its time (for a snapshot: inserted again,
    /// they leave as they would have).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn waiting(&self) -> Result<Option<(RecordBatch, Vec<i64>)>> {
        let mut sources: Vec<&RecordBatch> = Vec::new();
        let mut indices: Vec<(usize, usize)> = Vec::new();
        let mut times = Vec::new();
        for chunk in self.chunks.iter().flatten() {
            let mut rows: Vec<(u32, i64)> = chunk.by_time[chunk.released..]
                .iter()
                .zip(&chunk.times[chunk.released..])
                .map(|(&row, &time)| (row, time))
                .collect();
            if rows.is_empty() {
                continue;
            }
            rows.sort_unstable();
            let source = sources.len();
            sources.push(&chunk.batch);
            for (row, time) in rows {
                indices.push((source, row as usize));
                times.push(time);
            }
        }
        if indices.is_empty() {
            return Ok(None);
        }
        Ok(Some((interleave_record_batch(&sources, &indices)?, times)))
    }

    fn chunk(&self, number: u32) -> &Chunk {
        self.chunks[number as usize]
            .as_ref()
            .expect("a waiting row's chunk is kept")
    }

    /// The rows that `watermarks` (one advance after another, never decreasing) pass: each
    /// with the first advance that passes it; they leave the buffer.
    pub fn release(&mut self, watermarks: &[i64]) -> Result<Option<Released>> {
        let Some(&last) = watermarks.last() else {
            return Ok(None);
        };
        // (advance, time, chunk, row) of every row passed.
        let mut due: Vec<(usize, i64, u32, u32)> = Vec::new();
        let mut emptied: Vec<u32> = Vec::new();
        while let Some(&Reverse((earliest, number))) = self.queue.peek() {
            if earliest > last {
                break;
            }
            self.queue.pop();
            let chunk = self.chunks[number as usize]
                .as_mut()
                .expect("a queued chunk is kept");
            let from = chunk.released;
            let to = from + chunk.times[from..].partition_point(|&t| t <= last);
            for (&row, &time) in chunk.by_time[from..to].iter().zip(&chunk.times[from..to]) {
                let advance = watermarks.partition_point(|&m| m < time);
                due.push((advance, time, number, row));
            }
            chunk.released = to;
            match chunk.times.get(to) {
                Some(&next) => self.queue.push(Reverse((next, number))),
                None => emptied.push(number),
            }
        }
        if due.is_empty() {
            return Ok(None);
        }
        self.waiting -= due.len();
        // Equal rows (every ORDER BY column) keep their arrival order: chunk, then row.
        let order = |chunk: u32, row: u32| self.chunk(chunk).order.row(row as usize);
        due.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| order(a.2, a.3).cmp(&order(b.2, b.3)))
                .then_with(|| (a.2, a.3).cmp(&(b.2, b.3)))
        });
        // The chunks the rows come from, by their place in `sources`.
        let mut place = vec![usize::MAX; self.chunks.len()];
        let mut sources: Vec<&RecordBatch> = Vec::new();
        let indices: Vec<(usize, usize)> = due
            .iter()
            .map(|&(_, _, chunk, row)| {
                let slot = &mut place[chunk as usize];
                if *slot == usize::MAX {
                    *slot = sources.len();
                    sources.push(&self.chunk(chunk).batch);
                }
                (*slot, row as usize)
            })
            .collect();
        let released = Released {
            batch: interleave_record_batch(&sources, &indices)?,
            times: due.iter().map(|&(_, time, _, _)| time).collect(),
            advances: due.iter().map(|&(advance, _, _, _)| advance).collect(),
        };
        for number in emptied {
            self.chunks[number as usize] = None;
            self.live_chunks -= 1;
        }
        self.renumber();
        Ok(Some(released))
    }

    /// Drops the places of chunks no row waits in, once they are most of the list (an
    /// unbounded input would otherwise grow it by one per batch).
    fn renumber(&mut self) {
        if self.live_chunks == 0 {
            self.chunks.clear();
            return;
        }
        if self.chunks.len() <= 2 * self.live_chunks + 1024 {
            return;
        }
        let mut number = vec![u32::MAX; self.chunks.len()];
        let mut kept = Vec::with_capacity(self.live_chunks);
        for (old, chunk) in std::mem::take(&mut self.chunks).into_iter().enumerate() {
            if let Some(chunk) = chunk {
                number[old] = kept.len() as u32;
                kept.push(Some(chunk));
            }
        }
        self.chunks = kept;
        // Chunks keep their order: arrival still breaks ties.
        self.queue = std::mem::take(&mut self.queue)
            .into_iter()
            .map(|Reverse((time, chunk))| Reverse((time, number[chunk as usize])))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{AsArray, Int64Array};
    use datafusion::arrow::datatypes::{Field, Int64Type, Schema};
    use datafusion::physical_expr::expressions::Column;

    use super::*;

    /// A batch `(k, t, v)` and its times.
    fn rows(keys: &[i64], times: &[i64], values: &[i64]) -> (RecordBatch, Vec<i64>) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", ArrowType::Int64, false),
            Field::new("t", ArrowType::Int64, false),
            Field::new("v", ArrowType::Int64, false),
        ]));
        let key: ArrayRef = Arc::new(Int64Array::from(keys.to_vec()));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                key.clone(),
                Arc::new(Int64Array::from(times.to_vec())),
                Arc::new(Int64Array::from(values.to_vec())),
            ],
        )
        .unwrap();
        (batch, times.to_vec())
    }

    /// A buffer of `(k, t, v)` rows by `k`.
    fn buffer_by_k() -> SortBuffer {
        let key: Arc<dyn PhysicalExpr> = Arc::new(Column::new("k", 0));
        SortBuffer::new(vec![key], &[ArrowType::Int64], &[]).unwrap()
    }

    fn insert(buffer: &mut SortBuffer, keys: &[i64], times: &[i64], values: &[i64]) {
        let (batch, times) = rows(keys, times, values);
        let all: Vec<u32> = (0..batch.num_rows() as u32).collect();
        buffer.insert(&batch, &all, &times).unwrap();
    }

    fn values(released: &Released) -> Vec<i64> {
        released
            .batch
            .column(2)
            .as_primitive::<Int64Type>()
            .values()
            .to_vec()
    }

    #[test]
    fn rows_leave_by_advance_then_key_then_time_then_arrival() {
        let mut buffer = buffer_by_k();
        insert(&mut buffer, &[2, 1, 2, 1], &[30, 30, 10, 20], &[1, 2, 3, 4]);
        insert(&mut buffer, &[1, 2], &[20, 50], &[5, 6]);
        let released = buffer.release(&[15, 40]).unwrap().unwrap();
        // Advance 0 (15) passes the 10; advance 1 (40) the rest up to 30: key 1 first, the
        // two rows of key 1 at 20 in arrival order.
        assert_eq!(values(&released), [3, 4, 5, 2, 1]);
        assert_eq!(released.advances, [0, 1, 1, 1, 1]);
        assert_eq!(released.times, [10, 20, 20, 30, 30]);
        assert_eq!(buffer.len(), 1);
        assert!(buffer.release(&[45]).unwrap().is_none());
        assert_eq!(values(&buffer.release(&[50]).unwrap().unwrap()), [6]);
        assert_eq!(buffer.len(), 0);
    }

    #[test]
    fn chunks_nothing_waits_in_are_dropped() {
        let mut buffer = buffer_by_k();
        // One row per chunk; a late one (time 1,000,000) keeps waiting throughout.
        insert(&mut buffer, &[0], &[1_000_000], &[-1]);
        for time in 0..5000 {
            insert(&mut buffer, &[0], &[time], &[time]);
            if time % 10 == 9 {
                let released = buffer.release(&[time]).unwrap().unwrap();
                assert_eq!(values(&released), ((time - 9)..=time).collect::<Vec<_>>());
            }
        }
        assert_eq!(buffer.len(), 1);
        assert!(buffer.chunks.len() <= 2 * buffer.live_chunks + 1024 + 1);
        assert_eq!(values(&buffer.release(&[i64::MAX]).unwrap().unwrap()), [-1]);
        assert!(buffer.chunks.is_empty());
    }
}
