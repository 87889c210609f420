//! One processor of a row-time OVER window (Flink's `RowTime*BoundedPrecedingFunction`s):
//! rows wait per key until the watermark passes their time, then go out in time order,
//! each with the aggregates over its frame — rows of the same time together for RANGE, one
//! by one for ROWS. A row no later than the last time its key emitted is late, dropped and
//! counted. With the disk backend the least recently used keys beyond the memory budget
//! wait on disk with their frames (`residency.rs`, `on_disk.rs`).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt32Array};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::compute::{concat, interleave, take};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::common::Result;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::aggregates::group_values::GroupValues;
use datafusion::physical_plan::metrics::Count;

use super::node::Frame;
use super::on_disk::KeysOnDisk;
use crate::ops::updating_aggregate::aggregator::Aggregator;
use crate::ops::updating_aggregate::calls::{Call, key_ids};
use crate::ops::window::processor::TimedRows;
use crate::streaming::state::KeepKeys;
use crate::streaming::watermarks::SourceWatermarks;

/// A row kept: its batch's number and its place there.
pub(super) type RowRef = (u32, u32);

/// An input batch whose rows wait or are in a frame, with each call's arguments over it.
pub(super) struct Stored {
    pub batch: RecordBatch,
    pub args: Vec<Vec<ArrayRef>>,
    /// Rows still referring to it.
    pub refs: usize,
}

pub(super) struct OverProcessor {
    pub(super) frame: Frame,
    pub(super) keys: Vec<Arc<dyn PhysicalExpr>>,
    pub(super) key_ids: Option<Box<dyn GroupValues>>,
    pub(super) calls: Arc<[Call]>,
    /// One group per key.
    pub(super) accumulators: Vec<Box<dyn Aggregator>>,
    pub(super) stored: HashMap<u32, Stored>,
    pub(super) next_batch: u32,
    /// Rows waiting for the watermark, by (time, key), in arrival order.
    pub(super) pending: BTreeMap<(i64, usize), Vec<RowRef>>,
    /// Per key: the rows in its frame, oldest first (bounded frames).
    pub(super) retained: Vec<VecDeque<(i64, RowRef)>>,
    /// Per key: the time it last emitted.
    pub(super) last: Vec<Option<i64>>,
    pub(super) schema: SchemaRef,
    /// The input's schema: rows a checkpoint saved are restored as a batch of it.
    pub(super) input_schema: SchemaRef,
    pub(super) watermarks: SourceWatermarks,
    pub(super) late: Count,
    /// With the disk backend: the keys moved out of memory (`residency.rs`).
    pub(super) disk: Option<KeysOnDisk>,
}

impl OverProcessor {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        frame: Frame,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        input: &Schema,
        calls: Arc<[Call]>,
        schema: SchemaRef,
        sources: usize,
        late: Count,
    ) -> Result<Self> {
        let key_ids = key_ids(&keys, input)?;
        Ok(OverProcessor {
            frame,
            keys,
            key_ids,
            accumulators: calls
                .iter()
                .map(Call::accumulators)
                .collect::<Result<_>>()?,
            calls,
            stored: HashMap::new(),
            next_batch: 0,
            pending: BTreeMap::new(),
            retained: Vec::new(),
            last: Vec::new(),
            schema,
            input_schema: Arc::new(input.clone()),
            watermarks: SourceWatermarks::new(sources),
            late,
            disk: None,
        })
    }

    /// Rows from `source` with their times and the watermark before each, then the
    /// watermark after them; the rows the watermark released.
    fn push_rows(
        &mut self,
        source: usize,
        batch: RecordBatch,
        times: &[i64],
        before: &[Option<i64>],
        after: Option<i64>,
    ) -> Result<Vec<RecordBatch>> {
        let rows = batch.num_rows();
        let known = self.last.len();
        let (key_ids, columns) = match &mut self.key_ids {
            Some(ids) => {
                let columns = self
                    .keys
                    .iter()
                    .map(|k| k.evaluate(&batch)?.into_array(rows))
                    .collect::<Result<Vec<_>>>()?;
                let mut key_ids = Vec::with_capacity(rows);
                ids.intern(&columns, &mut key_ids)?;
                (key_ids, columns)
            }
            None => (vec![0; rows], Vec::new()),
        };
        let keys = key_ids
            .iter()
            .max()
            .map_or(0, |k| k + 1)
            .max(self.last.len());
        self.last.resize(keys, None);
        self.retained.resize_with(keys, VecDeque::new);
        self.move_in(&columns, &key_ids, known)?;
        // One reference held while the batch's rows go in (a row may be released before the
        // last one is read); one per waiting row.
        let number = self.keep_batch(batch, 1)?;
        let mut out = Vec::new();
        for row in 0..rows {
            if let Some(watermark) = before[row] {
                let previous = self.watermarks.current();
                self.watermarks.advance(source, watermark);
                let now = self.watermarks.current();
                if now > previous
                    && let Some(now) = now
                {
                    out.extend(self.release(now)?);
                }
            }
            let (key, time) = (key_ids[row], times[row]);
            if self.last[key].is_some_and(|last| time <= last) {
                self.late.add(1);
                continue;
            }
            self.pending
                .entry((time, key))
                .or_default()
                .push((number, row as u32));
            if let Some(stored) = self.stored.get_mut(&number) {
                stored.refs += 1;
            }
        }
        self.release_refs(&[(number, 0)]);
        if let Some(watermark) = after {
            self.watermarks.advance(source, watermark);
        }
        if let Some(now) = self.watermarks.current() {
            out.extend(self.release(now)?);
        }
        // After the batch: its rows' key numbers (`key_ids`) are spent.
        self.move_out_if_full()?;
        Ok(out)
    }

    /// `source` ended (its watermark is +∞); the rows that released.
    fn end_source(&mut self, source: usize) -> Result<Vec<RecordBatch>> {
        self.watermarks.end(source);
        match self.watermarks.current() {
            Some(now) => self.release(now),
            None => Ok(Vec::new()),
        }
    }

    /// Emits every waiting row at or behind `watermark`, in time order.
    fn release(&mut self, watermark: i64) -> Result<Vec<RecordBatch>> {
        let mut emitted: Vec<RowRef> = Vec::new();
        let mut results: Vec<Vec<ArrayRef>> = vec![Vec::new(); self.calls.len()];
        // For each emitted row, which result (per call) it takes.
        let mut result_of: Vec<u32> = Vec::new();
        // Rows done with (emitted without a frame, or out of their frame): their batches'
        // references go once the output is built.
        let mut done: Vec<RowRef> = Vec::new();
        while let Some(entry) = self.pending.first_entry() {
            let (time, key) = *entry.key();
            if time > watermark {
                break;
            }
            let rows = entry.remove();
            self.last[key] = Some(time);
            match self.frame {
                Frame::Unbounded | Frame::Range(_) => {
                    if let Frame::Range(range) = self.frame {
                        let mut expired = Vec::new();
                        while let Some(&(at, row)) = self.retained[key].front() {
                            if at >= time - range {
                                break;
                            }
                            self.retained[key].pop_front();
                            expired.push(row);
                        }
                        self.fold(&expired, key, false)?;
                        done.extend(expired);
                    }
                    self.fold(&rows, key, true)?;
                    let at = results[0].len() as u32;
                    for (call, accumulators) in self.accumulators.iter_mut().enumerate() {
                        results[call].push(accumulators.evaluate(&[key])?);
                    }
                    for &row in &rows {
                        emitted.push(row);
                        result_of.push(at);
                        if let Frame::Range(_) = self.frame {
                            self.retained[key].push_back((time, row));
                        }
                    }
                    if self.frame == Frame::Unbounded {
                        done.extend(&rows);
                    }
                }
                Frame::Rows(preceding) => {
                    for &row in &rows {
                        self.fold(&[row], key, true)?;
                        self.retained[key].push_back((time, row));
                        if self.retained[key].len() as u64 > preceding + 1 {
                            let (_, gone) = self.retained[key]
                                .pop_front()
                                .expect("longer than the frame");
                            self.fold(&[gone], key, false)?;
                            done.push(gone);
                        }
                        let at = results[0].len() as u32;
                        for (call, accumulators) in self.accumulators.iter_mut().enumerate() {
                            results[call].push(accumulators.evaluate(&[key])?);
                        }
                        emitted.push(row);
                        result_of.push(at);
                    }
                }
            }
        }
        if emitted.is_empty() {
            self.release_refs(&done);
            return Ok(Vec::new());
        }
        let output = self.output(&emitted, &results, &result_of)?;
        self.release_refs(&done);
        Ok(vec![output])
    }

    /// Folds `rows` of `key` into (or, `adding` false, out of) its accumulators.
    fn fold(&mut self, rows: &[RowRef], key: usize, adding: bool) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let (sources, picks) = Self::sources(rows);
        let groups = vec![key; rows.len()];
        // Each row's place in the batch it came in, for errors.
        let in_batch: Vec<u32> = rows.iter().map(|&(_, row)| row).collect();
        let all = BooleanArray::new(BooleanBuffer::new_set(rows.len()), None);
        let none = BooleanArray::new(BooleanBuffer::new_unset(rows.len()), None);
        for (call, accumulators) in self.accumulators.iter_mut().enumerate() {
            let width = self.calls[call].args.len();
            let mut args = Vec::with_capacity(width);
            for arg in 0..width {
                let arrays: Vec<&dyn Array> = sources
                    .iter()
                    .map(|number| self.stored[number].args[call][arg].as_ref())
                    .collect();
                args.push(interleave(&arrays, &picks)?);
            }
            let (add, retract) = if adding { (&all, &none) } else { (&none, &all) };
            accumulators.fold(
                &args,
                &groups,
                add,
                retract,
                self.last.len(),
                Some(&in_batch),
            )?;
        }
        Ok(())
    }

    /// The stored batches `rows` come from, and each row as (batch position, row).
    pub(super) fn sources(rows: &[RowRef]) -> (Vec<u32>, Vec<(usize, usize)>) {
        let mut sources: Vec<u32> = Vec::new();
        let picks = rows
            .iter()
            .map(|&(number, row)| {
                let at = match sources.iter().position(|&n| n == number) {
                    Some(at) => at,
                    None => {
                        sources.push(number);
                        sources.len() - 1
                    }
                };
                (at, row as usize)
            })
            .collect();
        (sources, picks)
    }

    /// Keeps `batch`, which `refs` rows refer to, with each call's arguments evaluated over
    /// it: its number, by which rows refer to it.
    pub(super) fn keep_batch(&mut self, batch: RecordBatch, refs: usize) -> Result<u32> {
        let args = self
            .calls
            .iter()
            .map(|call| Ok(call.evaluate_args(&batch)?.0))
            .collect::<Result<Vec<_>>>()?;
        let number = self.next_batch;
        self.next_batch += 1;
        self.stored.insert(number, Stored { batch, args, refs });
        Ok(number)
    }

    /// Drops a reference to each row's batch; a batch no row refers to is freed.
    pub(super) fn release_refs(&mut self, rows: &[RowRef]) {
        for &(number, _) in rows {
            if let Some(stored) = self.stored.get_mut(&number) {
                stored.refs -= 1;
                if stored.refs == 0 {
                    self.stored.remove(&number);
                }
            }
        }
    }

    /// The emitted rows' input columns and, per call, the result each takes.
    fn output(
        &self,
        emitted: &[RowRef],
        results: &[Vec<ArrayRef>],
        result_of: &[u32],
    ) -> Result<RecordBatch> {
        let (sources, picks) = Self::sources(emitted);
        let width = self.schema.fields().len() - self.calls.len();
        let mut columns = Vec::with_capacity(self.schema.fields().len());
        for column in 0..width {
            let arrays: Vec<&dyn Array> = sources
                .iter()
                .map(|number| self.stored[number].batch.column(column).as_ref())
                .collect();
            columns.push(interleave(&arrays, &picks)?);
        }
        let which = UInt32Array::from(result_of.to_vec());
        for parts in results {
            let parts: Vec<&dyn Array> = parts.iter().map(|p| p.as_ref()).collect();
            columns.push(take(&concat(&parts)?, &which, None)?);
        }
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }
}

impl TimedRows for OverProcessor {
    fn rows(
        &mut self,
        source: usize,
        batch: RecordBatch,
        times: &[i64],
        before: &[Option<i64>],
        after: Option<i64>,
    ) -> Result<Vec<RecordBatch>> {
        self.push_rows(source, batch, times, before, after)
    }

    fn end(&mut self, source: usize) -> Result<Vec<RecordBatch>> {
        self.end_source(source)
    }

    fn snapshot(&mut self) -> Result<Vec<u8>> {
        self.save()
    }

    fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        self.take_back(snapshot, keep)
    }
}
