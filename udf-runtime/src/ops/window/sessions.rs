//! One processor of a session-window aggregate (Flink's merging windows): each row opens
//! `[t, t + gap)` for its key; the key's open sessions that window touches (Flink's
//! `TimeWindow.intersects`: ends count) merge with it into one, their accumulators combined
//! with `merge`; a session whose end − 1 the watermark has reached is emitted once and
//! closed. A row whose session, after merging, is already behind the watermark is late,
//! dropped and counted.
//!
//! Rows are folded into their sessions in runs, flushed before a merge or a firing needs
//! the accumulators up to date.
//!
//! Keys are numbered as they come; after a batch, once the numbered keys outnumber twice the
//! open sessions (and a few thousand), those without an open session are forgotten and the
//! others numbered anew — over a stream of ever-new keys the table would grow without bound.
//!
//! With the disk backend the open sessions of the least recently used keys beyond the
//! memory budget wait on disk, and those keys are forgotten until a row of theirs comes
//! (`session_residency.rs`, `sessions_on_disk.rs`).

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanArray, RecordBatch, TimestampMillisecondArray, UInt32Array,
};
use datafusion::arrow::compute::{cast, take};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::row::{OwnedRow, RowConverter, SortField};
use datafusion::common::{Result, internal_err};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::aggregates::group_values::GroupValues;
use datafusion::physical_plan::metrics::Count;

use super::aggregate_node::GroupColumn;
use super::clock::WindowClock;
use super::sessions_on_disk::SessionsOnDisk;
use super::snapshot::{self, OpenWindows};
use crate::ops::integer_keys::key_table;
use crate::ops::updating_aggregate::aggregator::Aggregator;
use crate::ops::updating_aggregate::calls::{Call, key_schema};
use crate::streaming::local_time::LocalTime;
use crate::streaming::state::KeepKeys;

/// Keys are forgotten once they outnumber twice the open sessions and this many.
const KEYS_SLACK: usize = 4096;

/// An open session: `[start, end)` and its accumulators' slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Session {
    pub start: i64,
    pub end: i64,
    pub slot: usize,
}

pub(super) struct SessionAggregation {
    gap: i64,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    /// Key numbers; `None` without keys (one key).
    key_ids: Option<Box<dyn GroupValues>>,
    /// The key columns' types, for a fresh key table.
    key_schema: SchemaRef,
    /// Each key's value, to emit it (Arrow's row format).
    pub(super) key_values: Vec<OwnedRow>,
    key_rows: Option<RowConverter>,
    /// Each key's open sessions.
    pub(super) sessions: Vec<Vec<Session>>,
    /// Every open session by (end, key, start): the earliest to fire first.
    pub(super) by_end: BTreeSet<(i64, usize, i64)>,
    pub(super) calls: Arc<[Call]>,
    pub(super) accumulators: Vec<Box<dyn Aggregator>>,
    /// Accumulator slots: in use up to `slots`, freed ones to reuse.
    pub(super) slots: usize,
    pub(super) free: Vec<usize>,
    pub(super) layout: Arc<[GroupColumn]>,
    pub(super) schema: SchemaRef,
    pub(super) clock: WindowClock,
    late: Count,
    /// With the disk backend: the open sessions of keys moved out of memory
    /// (`session_residency.rs`).
    pub(super) disk: Option<SessionsOnDisk>,
    /// With the disk backend: for each key, the number of the batch that last had a row of
    /// it.
    pub(super) last_used: Vec<u64>,
}

impl SessionAggregation {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        gap: i64,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        input: &Schema,
        calls: Arc<[Call]>,
        layout: Arc<[GroupColumn]>,
        schema: SchemaRef,
        sources: usize,
        late: Count,
        local: Option<LocalTime>,
    ) -> Result<Self> {
        let key_schema = key_schema(&keys, input)?;
        let (key_ids, key_rows) = if keys.is_empty() {
            (None, None)
        } else {
            let sorts = key_schema
                .fields()
                .iter()
                .map(|f| SortField::new(f.data_type().clone()))
                .collect();
            (
                Some(key_table(key_schema.clone())?),
                Some(RowConverter::new(sorts)?),
            )
        };
        Ok(SessionAggregation {
            gap,
            key_schema,
            keys,
            key_ids,
            key_values: Vec::new(),
            key_rows,
            sessions: Vec::new(),
            by_end: BTreeSet::new(),
            accumulators: calls
                .iter()
                .map(Call::accumulators)
                .collect::<Result<_>>()?,
            calls,
            slots: 0,
            free: Vec::new(),
            layout,
            schema,
            clock: WindowClock::new(sources, local),
            late,
            disk: None,
            last_used: Vec::new(),
        })
    }

    /// Rows from `source` with their times and the watermark before each, then the
    /// watermark after them; the rows of the sessions that closed.
    pub(super) fn rows(
        &mut self,
        source: usize,
        batch: &RecordBatch,
        times: &[i64],
        before: &[Option<i64>],
        after: Option<i64>,
    ) -> Result<Vec<RecordBatch>> {
        let rows = batch.num_rows();
        let known = self.key_values.len();
        let key_ids = self.intern(batch)?;
        self.move_in(&key_ids, known)?;
        let args = self
            .calls
            .iter()
            .map(|call| call.evaluate_args(batch))
            .collect::<Result<Vec<_>>>()?;
        let mut run: Vec<(u32, usize)> = Vec::new();
        // The sessions a row's window touches (reused from row to row).
        let mut touching: Vec<Session> = Vec::new();
        let mut closed = Vec::new();
        for row in 0..rows {
            if let Some(watermark) = before[row] {
                self.clock.advance(source, watermark);
            }
            let watermark = self.clock.watermark();
            if let Some(watermark) = watermark
                && self
                    .by_end
                    .first()
                    .is_some_and(|(end, ..)| end - 1 <= watermark)
            {
                self.fold(&args, std::mem::take(&mut run))?;
                closed.extend(self.close(watermark)?);
            }
            let key = key_ids[row];
            let time = self.clock.time(times[row]);
            let (start, end) = (time, time + self.gap);
            touching.clear();
            touching.extend(
                self.sessions[key]
                    .iter()
                    .filter(|s| s.start <= end && s.end >= start)
                    .copied(),
            );
            let merged_start = touching.iter().map(|s| s.start).fold(start, i64::min);
            let merged_end = touching.iter().map(|s| s.end).fold(end, i64::max);
            if watermark.is_some_and(|w| merged_end - 1 <= w) {
                self.late.add(1);
                continue;
            }
            let slot = match touching.as_slice() {
                [] => self.take_slot(),
                [first, rest @ ..] => {
                    if !rest.is_empty() {
                        self.fold(&args, std::mem::take(&mut run))?;
                    }
                    for other in rest {
                        for accumulators in &mut self.accumulators {
                            accumulators.merge(first.slot, other.slot, self.slots)?;
                        }
                        self.free.push(other.slot);
                    }
                    for session in &touching {
                        self.by_end.remove(&(session.end, key, session.start));
                    }
                    self.sessions[key].retain(|s| !touching.contains(s));
                    first.slot
                }
            };
            let session = Session {
                start: merged_start,
                end: merged_end,
                slot,
            };
            self.sessions[key].push(session);
            self.by_end.insert((session.end, key, session.start));
            run.push((row as u32, slot));
        }
        self.fold(&args, run)?;
        if let Some(watermark) = after {
            self.clock.advance(source, watermark);
        }
        if let Some(watermark) = self.clock.watermark() {
            closed.extend(self.close(watermark)?);
        }
        // After the batch: its rows' key numbers (`key_ids`) are spent.
        self.move_out_if_full()?;
        if self.key_values.len() > (2 * self.by_end.len()).max(KEYS_SLACK) {
            self.forget_idle_keys()?;
        }
        Ok(closed)
    }

    /// Forgets the keys without an open session and numbers the others anew, in the order
    /// they had.
    pub(super) fn forget_idle_keys(&mut self) -> Result<()> {
        let (Some(ids), Some(converter)) = (&mut self.key_ids, &self.key_rows) else {
            return Ok(());
        };
        if self.disk.is_some() {
            self.last_used.resize(self.key_values.len(), 0);
            let mut key = 0;
            self.last_used.retain(|_| {
                key += 1;
                !self.sessions[key - 1].is_empty()
            });
        }
        let (values, sessions): (Vec<OwnedRow>, Vec<Vec<Session>>) =
            std::mem::take(&mut self.key_values)
                .into_iter()
                .zip(std::mem::take(&mut self.sessions))
                .filter(|(_, sessions)| !sessions.is_empty())
                .unzip();
        let columns = converter.convert_rows(values.iter().map(|value| value.row()))?;
        let mut fresh = key_table(self.key_schema.clone())?;
        let mut numbered = Vec::with_capacity(values.len());
        fresh.intern(&columns, &mut numbered)?;
        if numbered
            .iter()
            .enumerate()
            .any(|(at, &number)| at != number)
        {
            return internal_err!("the session window's open keys were numbered out of order");
        }
        *ids = fresh;
        self.key_values = values;
        self.by_end = sessions
            .iter()
            .enumerate()
            .flat_map(|(key, sessions)| sessions.iter().map(move |s| (s.end, key, s.start)))
            .collect();
        self.sessions = sessions;
        Ok(())
    }

    /// `source` ended (its watermark is +∞); the rows of the sessions that closed.
    pub(super) fn end(&mut self, source: usize) -> Result<Vec<RecordBatch>> {
        self.clock.end(source);
        match self.clock.watermark() {
            Some(watermark) => self.close(watermark),
            None => Ok(Vec::new()),
        }
    }

    /// Each row's key number; new keys' values kept for emitting.
    fn intern(&mut self, batch: &RecordBatch) -> Result<Vec<usize>> {
        let rows = batch.num_rows();
        let columns = self
            .keys
            .iter()
            .map(|k| k.evaluate(batch)?.into_array(rows))
            .collect::<Result<Vec<_>>>()?;
        self.intern_keys(&columns, rows)
    }

    /// The key number of each of `rows` rows of key `columns`.
    fn intern_keys(&mut self, columns: &[ArrayRef], rows: usize) -> Result<Vec<usize>> {
        let (Some(ids), Some(converter)) = (&mut self.key_ids, &self.key_rows) else {
            if self.sessions.is_empty() {
                self.sessions.push(Vec::new());
            }
            return Ok(vec![0; rows]);
        };
        let mut key_ids = Vec::with_capacity(rows);
        ids.intern(columns, &mut key_ids)?;
        if ids.len() > self.key_values.len() {
            let values = converter.convert_columns(columns)?;
            for (row, &id) in key_ids.iter().enumerate() {
                if id == self.key_values.len() {
                    self.key_values.push(values.row(row).owned());
                    self.sessions.push(Vec::new());
                }
            }
        }
        Ok(key_ids)
    }

    /// The open sessions, for a checkpoint.
    pub(super) fn snapshot(&mut self) -> Result<Vec<u8>> {
        let open: Vec<(usize, Session)> = self
            .sessions
            .iter()
            .enumerate()
            .flat_map(|(key, sessions)| sessions.iter().map(move |s| (key, *s)))
            .collect();
        let keys = match &self.key_rows {
            Some(converter) => {
                converter.convert_rows(open.iter().map(|(key, _)| self.key_values[*key].row()))?
            }
            None => Vec::new(),
        };
        let slots = UInt32Array::from_iter_values(open.iter().map(|(_, s)| s.slot as u32));
        let calls = self
            .accumulators
            .iter_mut()
            .map(|accumulators| Ok(take(&accumulators.save(self.slots)?, &slots, None)?))
            .collect::<Result<_>>()?;
        let windows = OpenWindows {
            starts: open.iter().map(|(_, s)| s.start).collect(),
            ends: open.iter().map(|(_, s)| s.end).collect(),
            keys,
            calls,
        };
        let mut windows = if open.is_empty() {
            vec![]
        } else {
            vec![windows]
        };
        self.open_on_disk(&mut windows)?;
        snapshot::write(self.clock.watermarks(), &windows)
    }

    /// Takes back the open sessions of a checkpoint (those of the keys `keep` says are this
    /// processor's, when given), beside any taken before.
    pub(super) fn restore(&mut self, bytes: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        let restored = snapshot::read(bytes, self.keys.len(), self.calls.len(), keep)?;
        self.clock.restore(&restored.watermarks)?;
        for open in restored.windows {
            let key_ids = self.intern_keys(&open.keys, open.rows())?;
            let mut slots = Vec::with_capacity(open.rows());
            for (row, &key) in key_ids.iter().enumerate() {
                let session = Session {
                    start: open.starts[row],
                    end: open.ends[row],
                    slot: self.take_slot(),
                };
                self.sessions[key].push(session);
                self.by_end.insert((session.end, key, session.start));
                slots.push(session.slot);
            }
            for (index, accumulators) in self.accumulators.iter_mut().enumerate() {
                let saved = &open.calls[index];
                self.calls[index].restore_into(accumulators.as_mut(), saved, &slots, self.slots)?;
            }
        }
        // A snapshot larger than the memory budget goes back to disk.
        self.move_out_if_full()
    }

    pub(super) fn take_slot(&mut self) -> usize {
        self.free.pop().unwrap_or_else(|| {
            self.slots += 1;
            self.slots - 1
        })
    }

    /// Folds a run's rows into their sessions' slots.
    fn fold(
        &mut self,
        args: &[(Vec<ArrayRef>, Option<BooleanArray>)],
        run: Vec<(u32, usize)>,
    ) -> Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        let rows = UInt32Array::from_iter_values(run.iter().map(|(row, _)| *row));
        let slots: Vec<usize> = run.iter().map(|(_, slot)| *slot).collect();
        let none = BooleanArray::from(vec![false; slots.len()]);
        for ((args, filter), accumulators) in args.iter().zip(&mut self.accumulators) {
            let args = args
                .iter()
                .map(|a| Ok(take(a, &rows, None)?))
                .collect::<Result<Vec<_>>>()?;
            let add = match filter {
                Some(kept) => BooleanArray::from(take(kept, &rows, None)?.to_data()),
                None => BooleanArray::from(vec![true; slots.len()]),
            };
            accumulators.fold(&args, &slots, &add, &none, self.slots, Some(rows.values()))?;
        }
        Ok(())
    }

    /// Emits and closes every session whose end − 1 the watermark has reached: those in
    /// memory earliest end first, then those on disk.
    fn close(&mut self, watermark: i64) -> Result<Vec<RecordBatch>> {
        let mut closed = self.close_in_memory(watermark)?;
        self.close_on_disk(watermark, &mut closed)?;
        Ok(closed)
    }

    fn close_in_memory(&mut self, watermark: i64) -> Result<Vec<RecordBatch>> {
        let mut closing = Vec::new();
        while let Some(&(end, key, start)) = self.by_end.first() {
            if end - 1 > watermark {
                break;
            }
            self.by_end.pop_first();
            let sessions = &mut self.sessions[key];
            let at = sessions
                .iter()
                .position(|s| s.start == start && s.end == end)
                .expect("every session listed by end is open");
            closing.push((key, sessions.swap_remove(at)));
        }
        if closing.is_empty() {
            return Ok(Vec::new());
        }
        let slots: Vec<usize> = closing.iter().map(|(_, s)| s.slot).collect();
        let keys = match &self.key_rows {
            Some(converter) => converter
                .convert_rows(closing.iter().map(|(key, _)| self.key_values[*key].row()))?,
            None => Vec::new(),
        };
        let mut values = Vec::with_capacity(self.accumulators.len());
        for accumulators in &mut self.accumulators {
            values.push(accumulators.evaluate(&slots)?);
            accumulators.clear(&slots);
        }
        self.free.extend(&slots);
        let starts: Vec<i64> = closing.iter().map(|(_, s)| s.start).collect();
        let ends: Vec<i64> = closing.iter().map(|(_, s)| s.end).collect();
        Ok(vec![session_rows(
            &self.schema,
            &self.layout,
            &starts,
            &ends,
            keys,
            values,
        )?])
    }
}

/// The rows of closed sessions: each one's `starts` and `ends`, key columns and aggregate
/// `values`, laid out as `schema` and `layout` say.
pub(super) fn session_rows(
    schema: &SchemaRef,
    layout: &[GroupColumn],
    starts: &[i64],
    ends: &[i64],
    keys: Vec<ArrayRef>,
    values: Vec<ArrayRef>,
) -> Result<RecordBatch> {
    let bound = |times: &[i64], field: usize| -> Result<ArrayRef> {
        let values = TimestampMillisecondArray::from_iter_values(times.iter().copied());
        Ok(cast(&values, schema.field(field).data_type())?)
    };
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, column) in layout.iter().enumerate() {
        columns.push(match column {
            GroupColumn::WindowStart => bound(starts, field)?,
            GroupColumn::WindowEnd => bound(ends, field)?,
            GroupColumn::Key(key) => keys[*key].clone(),
        });
    }
    columns.extend(values);
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}
