//! One processor of a window aggregate: the open windows with their groups' accumulators,
//! filled as rows arrive and emitted when the watermark passes their end.
//!
//! Every row is checked and assigned — a row whose slice has fired is late and dropped;
//! otherwise it joins each of its windows (tumbling windows take a stretch of rows in one
//! window at once) — but folded in runs: a run ends only where the watermark reaches the end
//! of an open window, so windows fire before the rows after that point, as in Flink, while
//! the rows between are folded per window at once (a slice of the batch when they are one
//! stretch of it).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, RecordBatch, TimestampMillisecondArray};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::compute::{cast, take};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::common::Result;
use datafusion::logical_expr::EmitTo;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::aggregates::group_values::GroupValues;
use datafusion::physical_plan::metrics::Count;

use super::aggregate_node::GroupColumn;
use super::clock::WindowClock;
use super::panes_on_disk::PanesOnDisk;
use super::snapshot::{self, OpenWindows};
use super::spec::WindowKind;
use crate::ops::indices::{lend, reclaim};
use crate::ops::integer_keys::key_table;
use crate::ops::updating_aggregate::aggregator::Aggregator;
use crate::ops::updating_aggregate::calls::{Call, key_schema};
use crate::ops::updating_aggregate::key_columns;
use crate::streaming::local_time::LocalTime;
use crate::streaming::state::KeepKeys;

/// A window: `[start, end)`, ordered by end so the earliest to fire comes first.
pub(super) type Window = (i64, i64);

/// One open window's groups.
pub(super) struct Pane {
    pub keys: Option<Box<dyn GroupValues>>,
    pub accumulators: Vec<Box<dyn Aggregator>>,
    pub groups: usize,
    /// With the disk backend: for each group in memory, the number of the batch that last
    /// touched it, and whether the store holds an entry of it (`pane_residency.rs`).
    pub last_used: Vec<u64>,
    pub copies: Vec<bool>,
    /// Whether groups of this window went to disk.
    pub on_disk: bool,
}

pub(super) struct WindowAggregation {
    window: WindowKind,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    pub(super) key_schema: SchemaRef,
    pub(super) calls: Arc<[Call]>,
    layout: Arc<[GroupColumn]>,
    schema: SchemaRef,
    /// Open windows by (end, start).
    pub(super) panes: BTreeMap<(i64, i64), Pane>,
    /// With the disk backend, the groups beyond the memory budget (`panes_on_disk.rs`).
    pub(super) disk: Option<PanesOnDisk>,
    /// Closed windows' key tables and accumulators, emptied, for windows to come.
    spare: Vec<Pane>,
    clock: WindowClock,
    late: Count,
    /// Buffers kept from batch to batch: the run being gathered, the group of each row of a
    /// window's rows, and `0, 1, 2, ..` (every group of a pane).
    run: Run,
    groups: Vec<usize>,
    numbered: Vec<usize>,
}

/// Rows to fold, by window, in the order the windows first appear (a run mostly holds one
/// or two windows: found by a look at the last one, not by hashing every row). Its row
/// vectors are kept for the next run.
#[derive(Default)]
struct Run {
    windows: Vec<(Window, Vec<u32>)>,
    last: usize,
    spare: Vec<Vec<u32>>,
}

impl Run {
    fn push(&mut self, window: Window, row: u32) {
        let at = self.slot(window);
        self.windows[at].1.push(row);
    }

    /// Adds a stretch of rows of one window.
    fn extend(&mut self, window: Window, rows: Range<usize>) {
        let at = self.slot(window);
        self.windows[at]
            .1
            .extend(rows.start as u32..rows.end as u32);
    }

    /// Where `window`'s rows are (added when it is new).
    fn slot(&mut self, window: Window) -> usize {
        let at = match self.windows.get(self.last) {
            Some((last, _)) if *last == window => self.last,
            _ => match self.windows.iter().position(|(w, _)| *w == window) {
                Some(at) => at,
                None => {
                    let rows = self.spare.pop().unwrap_or_default();
                    self.windows.push((window, rows));
                    self.windows.len() - 1
                }
            },
        };
        self.last = at;
        at
    }

    fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }
}

/// A batch's columns as the aggregation reads them.
struct Columns {
    keys: Vec<ArrayRef>,
    /// Each call's arguments and FILTER.
    calls: Vec<(Vec<ArrayRef>, Option<BooleanArray>)>,
}

impl WindowAggregation {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        window: WindowKind,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        input: &Schema,
        calls: Arc<[Call]>,
        layout: Arc<[GroupColumn]>,
        schema: SchemaRef,
        sources: usize,
        late: Count,
        local: Option<LocalTime>,
    ) -> Result<Self> {
        Ok(WindowAggregation {
            window,
            key_schema: key_schema(&keys, input)?,
            keys,
            calls,
            layout,
            schema,
            panes: BTreeMap::new(),
            disk: None,
            spare: Vec::new(),
            clock: WindowClock::new(sources, local),
            late,
            run: Run::default(),
            groups: Vec::new(),
            numbered: Vec::new(),
        })
    }

    /// Keeps the groups beyond the memory budget on disk.
    pub(super) fn with_disk(mut self, disk: PanesOnDisk) -> Self {
        self.disk = Some(disk);
        self
    }

    /// Rows from `source` with their times and the watermark before each, then the
    /// watermark after them; the rows of the windows that fired.
    pub(super) fn rows(
        &mut self,
        source: usize,
        batch: &RecordBatch,
        times: &[i64],
        before: &[Option<i64>],
        after: Option<i64>,
    ) -> Result<Vec<RecordBatch>> {
        let rows = batch.num_rows();
        if let Some(disk) = &mut self.disk {
            disk.batch += 1;
        }
        let columns = Columns {
            keys: self
                .keys
                .iter()
                .map(|k| k.evaluate(batch)?.into_array(rows))
                .collect::<Result<_>>()?,
            calls: self
                .calls
                .iter()
                .map(|call| call.evaluate_args(batch))
                .collect::<Result<_>>()?,
        };
        let mut fired = Vec::new();
        let mut run = std::mem::take(&mut self.run);
        let mut windows = Vec::new();
        // The earliest end − 1 of an open window or one of this run: the watermark there
        // ends the run.
        let mut next_fire = self.next_fire();
        let mut watermark = self.clock.watermark();
        let mut last_reported = None;
        // Rows are taken a stretch of equal watermarks at a time (a batch's rows mostly
        // share theirs). Within one no window fires — a row whose window could is late —
        // so the watermark is combined and checked at its start only.
        let mut row = 0;
        while row < rows {
            let reported = before[row];
            let same = before[row..].iter().take_while(|&&b| b == reported).count();
            if reported != last_reported {
                last_reported = reported;
                if let Some(reported) = reported {
                    self.clock.advance(source, reported);
                    watermark = self.clock.watermark();
                }
            }
            if let Some(watermark) = watermark
                && watermark >= next_fire
            {
                self.fold(&columns, &mut run)?;
                fired.extend(self.fire(watermark)?);
                next_fire = self.next_fire();
            }
            let stretch = row..row + same;
            match self.window {
                WindowKind::Tumble { size } => {
                    self.assign_tumbling(size, stretch, times, watermark, &mut run, &mut next_fire)
                }
                _ => {
                    for row in stretch {
                        let time = self.clock.time(times[row]);
                        if watermark.is_some_and(|w| self.window.slice_end(time) - 1 <= w) {
                            self.late.add(1);
                            continue;
                        }
                        self.window.windows(time, &mut windows);
                        for &window in &windows {
                            run.push(window, row as u32);
                            next_fire = next_fire.min(window.1 - 1);
                        }
                    }
                }
            }
            row += same;
        }
        self.fold(&columns, &mut run)?;
        self.run = run;
        if let Some(watermark) = after {
            self.clock.advance(source, watermark);
        }
        if let Some(watermark) = self.clock.watermark() {
            fired.extend(self.fire(watermark)?);
        }
        Ok(fired)
    }

    /// Adds `rows` (of one watermark) to their tumbling windows of `size`, or counts them
    /// late; lowers `next_fire` to the earliest end − 1 among them.
    fn assign_tumbling(
        &mut self,
        size: i64,
        rows: Range<usize>,
        times: &[i64],
        watermark: Option<i64>,
        run: &mut Run,
        next_fire: &mut i64,
    ) {
        // The current stretch: its window and first row. A row inside the window of the row
        // before it joins the stretch without a division.
        let mut stretch: Option<(Window, usize)> = None;
        let past_last = rows.end;
        for row in rows {
            let time = self.clock.time(times[row]);
            if let Some(((start, end), _)) = stretch
                && start <= time
                && time < end
            {
                continue;
            }
            if let Some((window, from)) = stretch.take() {
                run.extend(window, from..row);
            }
            let start = time - time.rem_euclid(size);
            let window = (start, start + size);
            if watermark.is_some_and(|w| window.1 - 1 <= w) {
                self.late.add(1);
                continue;
            }
            *next_fire = (*next_fire).min(window.1 - 1);
            stretch = Some((window, row));
        }
        if let Some((window, from)) = stretch {
            run.extend(window, from..past_last);
        }
    }

    /// `source` ended (its watermark is +∞); the rows of the windows that fired.
    pub(super) fn end(&mut self, source: usize) -> Result<Vec<RecordBatch>> {
        self.clock.end(source);
        match self.clock.watermark() {
            Some(watermark) => self.fire(watermark),
            None => Ok(Vec::new()),
        }
    }

    fn next_fire(&self) -> i64 {
        self.panes
            .keys()
            .next()
            .map_or(i64::MAX, |(end, _)| end - 1)
    }

    /// Folds a run's rows into their windows; the run is empty after. With the disk backend,
    /// groups then move out when those in memory outgrow the budget.
    fn fold(&mut self, columns: &Columns, run: &mut Run) -> Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        // Out of `self` while a pane is borrowed from it.
        let mut disk = self.disk.take();
        let folded = self.fold_windows(columns, run, disk.as_mut());
        self.disk = disk;
        folded?;
        self.move_out_if_full()
    }

    fn fold_windows(
        &mut self,
        columns: &Columns,
        run: &mut Run,
        mut disk: Option<&mut PanesOnDisk>,
    ) -> Result<()> {
        let calls = self.calls.clone();
        let mut groups = std::mem::take(&mut self.groups);
        for ((start, end), mut rows) in run.windows.drain(..) {
            // A window's rows come in order. When they are one stretch of the batch (times
            // mostly rise, so they usually are), the window reads a slice of the batch's
            // columns; otherwise its rows are gathered.
            let count = rows.len();
            let first = rows.first().map_or(0, |&r| r as usize);
            let stretch = rows
                .last()
                .is_some_and(|&r| r as usize + 1 - first == count);
            let picked = if stretch { None } else { Some(lend(&mut rows)) };
            let pick = |column: &ArrayRef| -> Result<ArrayRef> {
                match &picked {
                    Some(rows) => Ok(take(column, rows, None)?),
                    None => Ok(column.slice(first, count)),
                }
            };
            // The batch's row at each position, for errors.
            let batch_rows = match &picked {
                Some(rows) => Some(&rows.values()[..]),
                None if first == 0 => None,
                None => Some(&rows[..]),
            };
            let picked_keys = columns.keys.iter().map(&pick).collect::<Result<Vec<_>>>()?;
            let (pane, before) = self.groups_of((start, end), &picked_keys, count, &mut groups)?;
            if let Some(disk) = disk.as_deref_mut() {
                disk.move_in((start, end), pane, &calls, &picked_keys, &groups, before)?;
            }
            let none = BooleanArray::new(BooleanBuffer::new_unset(count), None);
            for ((args, filter), accumulators) in columns.calls.iter().zip(&mut pane.accumulators) {
                let args = args.iter().map(&pick).collect::<Result<Vec<_>>>()?;
                let add = match filter {
                    Some(kept) => {
                        BooleanArray::from(pick(&(Arc::new(kept.clone()) as ArrayRef))?.to_data())
                    }
                    None => BooleanArray::new(BooleanBuffer::new_set(count), None),
                };
                accumulators.fold(&args, &groups, &add, &none, pane.groups, batch_rows)?;
            }
            if let Some(picked) = picked {
                rows = reclaim(picked);
            }
            rows.clear();
            run.spare.push(rows);
        }
        run.last = 0;
        self.groups = groups;
        Ok(())
    }

    /// The pane of `window` (opened when it is not) and how many groups it had before;
    /// `groups` becomes the group of each of `count` rows with these keys in it.
    fn groups_of(
        &mut self,
        (start, end): Window,
        keys: &[ArrayRef],
        count: usize,
        groups: &mut Vec<usize>,
    ) -> Result<(&mut Pane, usize)> {
        let pane = match self.panes.entry((end, start)) {
            std::collections::btree_map::Entry::Occupied(pane) => pane.into_mut(),
            std::collections::btree_map::Entry::Vacant(slot) => {
                let pane = match self.spare.pop() {
                    Some(pane) => pane,
                    None => Pane {
                        keys: if self.keys.is_empty() {
                            None
                        } else {
                            Some(key_table(self.key_schema.clone())?)
                        },
                        accumulators: self
                            .calls
                            .iter()
                            .map(Call::accumulators)
                            .collect::<Result<_>>()?,
                        groups: 0,
                        last_used: Vec::new(),
                        copies: Vec::new(),
                        on_disk: false,
                    },
                };
                slot.insert(pane)
            }
        };
        let before = pane.groups;
        groups.clear();
        match &mut pane.keys {
            Some(values) => {
                values.intern(keys, groups)?;
                pane.groups = values.len();
            }
            None => {
                groups.resize(count, 0);
                pane.groups = 1;
            }
        }
        Ok((pane, before))
    }

    /// The open windows, for a checkpoint: the groups in memory, then those on disk.
    pub(super) fn snapshot(&mut self) -> Result<Vec<u8>> {
        let mut windows = Vec::with_capacity(self.panes.len());
        let mut on_disk = Vec::new();
        for (&(end, start), pane) in &mut self.panes {
            let keys = match &mut pane.keys {
                Some(values) => key_columns(values)?,
                None => Vec::new(),
            };
            if let Some(disk) = &self.disk
                && pane.on_disk
            {
                on_disk.push(((start, end), disk.shadowed_in(pane, &keys)?));
            }
            let calls = pane
                .accumulators
                .iter_mut()
                .map(|accumulators| accumulators.save(pane.groups))
                .collect::<Result<_>>()?;
            windows.push(OpenWindows {
                starts: vec![start; pane.groups],
                ends: vec![end; pane.groups],
                keys,
                calls,
            });
        }
        if let Some(disk) = &self.disk {
            for ((start, end), shadowed) in on_disk {
                disk.each_group((start, end), &shadowed, |read| {
                    windows.push(OpenWindows {
                        starts: vec![start; read.count],
                        ends: vec![end; read.count],
                        keys: read.keys,
                        calls: read.saved,
                    });
                    Ok(())
                })?;
            }
        }
        snapshot::write(self.clock.watermarks(), &windows)
    }

    /// Takes back the open windows of a checkpoint (the groups `keep` says are this
    /// processor's, when given), beside any taken before.
    pub(super) fn restore(&mut self, bytes: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        let restored = snapshot::read(bytes, self.keys.len(), self.calls.len(), keep)?;
        self.clock.restore(&restored.watermarks)?;
        for open in restored.windows {
            for rows in open.by_window() {
                let window = (open.starts[rows.start], open.ends[rows.start]);
                let slice = |column: &ArrayRef| column.slice(rows.start, rows.len());
                let keys: Vec<ArrayRef> = open.keys.iter().map(slice).collect();
                let calls = self.calls.clone();
                let mut groups = Vec::new();
                let (pane, _) = self.groups_of(window, &keys, rows.len(), &mut groups)?;
                for (index, accumulators) in pane.accumulators.iter_mut().enumerate() {
                    let saved = slice(&open.calls[index]);
                    calls[index].restore_into(
                        accumulators.as_mut(),
                        &saved,
                        &groups,
                        pane.groups,
                    )?;
                }
                // A checkpoint larger than the budget goes back to disk as it is read.
                self.move_out_if_full()?;
            }
        }
        Ok(())
    }

    /// Emits and closes every window whose end − 1 the watermark has reached, earliest end
    /// first.
    fn fire(&mut self, watermark: i64) -> Result<Vec<RecordBatch>> {
        let mut fired = Vec::new();
        let mut last_end = None;
        while let Some(entry) = self.panes.first_entry() {
            let (end, start) = *entry.key();
            if end - 1 > watermark {
                break;
            }
            let mut pane = entry.remove();
            last_end = Some(end);
            while self.numbered.len() < pane.groups {
                self.numbered.push(self.numbered.len());
            }
            let groups = &self.numbered[..pane.groups];
            let keys = match &mut pane.keys {
                Some(keys) => keys.emit(EmitTo::All)?,
                None => Vec::new(),
            };
            // Groups on disk that are in memory too are emitted from memory only.
            let shadowed = match &self.disk {
                Some(disk) if pane.on_disk => Some(disk.shadowed_in(&pane, &keys)?),
                _ => None,
            };
            if pane.groups > 0 {
                fired.push(self.window_rows((start, end), keys, &mut pane.accumulators, groups)?);
            }

            // Its key table keeps its capacity and its accumulators their vectors for the
            // next window (a window of as many keys as this one). Handing out its keys left
            // the hash entries of a table of several key columns behind: they go.
            if let Some(keys) = &mut pane.keys {
                keys.clear_shrink(pane.groups);
            }
            for accumulators in &mut pane.accumulators {
                accumulators.clear(groups);
            }
            pane.groups = 0;
            pane.last_used.clear();
            pane.copies.clear();
            pane.on_disk = false;
            self.spare.push(pane);
            if let Some(shadowed) = shadowed {
                self.fire_on_disk((start, end), &shadowed, &mut fired)?;
            }
        }
        // Every window up to the last end fired (the earliest end first): their groups on
        // disk are dead.
        if let (Some(disk), Some(end)) = (&self.disk, last_end) {
            disk.fired_up_to(end)?;
        }
        Ok(fired)
    }

    /// The rows of window `(start, end)` for the groups of `keys` (a row each), whose
    /// accumulators are `groups` of `accumulators`.
    pub(super) fn window_rows(
        &self,
        (start, end): Window,
        keys: Vec<ArrayRef>,
        accumulators: &mut [Box<dyn Aggregator>],
        groups: &[usize],
    ) -> Result<RecordBatch> {
        let bound = |at: i64, field: usize| -> Result<ArrayRef> {
            let values = TimestampMillisecondArray::from(vec![at; groups.len()]);
            Ok(cast(&values, self.schema.field(field).data_type())?)
        };
        let mut columns = Vec::with_capacity(self.schema.fields().len());
        for (field, column) in self.layout.iter().enumerate() {
            columns.push(match column {
                GroupColumn::WindowStart => bound(start, field)?,
                GroupColumn::WindowEnd => bound(end, field)?,
                GroupColumn::Key(key) => keys[*key].clone(),
            });
        }
        for accumulators in accumulators.iter_mut() {
            columns.push(accumulators.evaluate(groups)?);
        }
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }
}
