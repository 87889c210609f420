//! One partition of an updating GROUP BY, row by row as Flink's `GroupAggFunction` and yet
//! vectorized.
//!
//! Flink folds one row at a time and compares the group's result before and after it. Rows
//! of different groups do not affect one another, so a batch is cut into *rounds*: round
//! `n` holds the `n`-th row of every group the batch touches. Within a round every group
//! appears once, so each call folds the whole round at once and evaluates the round's
//! groups together; the results after round `n` are the results before round `n + 1`. With
//! 1,000 groups in a batch of 8,192 rows that is about ten rounds; a batch of one group has
//! a round per row.
//!
//! Per row (Flink's rules, with no state TTL): a taken-back row of a group that does not
//! exist is dropped; a row that creates a group emits `+I` with the new result; a row that
//! changes an existing group's result emits `-U` old and `+U` new, one that changes nothing
//! emits nothing; a row that empties a group (as many rows taken back as added) emits `-D`
//! with the old result, and the group starts over. The output keeps the input's order.

use std::sync::Arc;

use datafusion::arrow::array::make_comparator;
use datafusion::arrow::array::{
    ArrayRef, BooleanArray, BooleanBufferBuilder, RecordBatch, UInt32Array,
};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::compute::{SortOptions, concat, take};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::Result;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::aggregates::group_values::GroupValues;
use udf_core::RowKind;

use super::aggregator::Aggregator;
use super::calls::{Call, key_ids};
use super::on_disk::GroupsOnDisk;
use super::scratch::{Outcome, Scratch};
use crate::changelog;
use crate::ops::indices::{lend, reclaim};

pub(super) struct UpdatingAggregation {
    pub(super) keys: Vec<Arc<dyn PhysicalExpr>>,
    pub(super) calls: Arc<[Call]>,
    pub(super) accumulators: Vec<Box<dyn Aggregator>>,
    /// The input's row-kind column; `None` for an insert-only input.
    op: Option<usize>,
    /// Group numbers of keys; `None` without GROUP BY keys (one group).
    pub(super) group_values: Option<Box<dyn GroupValues>>,
    /// Rows each group holds (added minus taken back): 0 when it does not exist.
    pub(super) counts: Vec<i64>,
    /// Compares results before and after a row.
    results: RowConverter,
    schema: SchemaRef,
    /// The input's schema, for a fresh key table (`on_disk.rs`).
    pub(super) input: SchemaRef,
    /// With the disk backend: the groups moved out of memory (`on_disk.rs`).
    pub(super) disk: Option<GroupsOnDisk>,
    scratch: Scratch,
}

impl UpdatingAggregation {
    pub(super) fn new(
        keys: Vec<Arc<dyn PhysicalExpr>>,
        calls: Arc<[Call]>,
        input: &Schema,
        schema: SchemaRef,
    ) -> Result<Self> {
        let group_values = key_ids(&keys, input)?;
        let accumulators = calls
            .iter()
            .map(Call::accumulators)
            .collect::<Result<Vec<_>>>()?;
        let results = RowConverter::new(
            calls
                .iter()
                .map(|c| SortField::new(c.output.data_type().clone()))
                .collect(),
        )?;
        Ok(UpdatingAggregation {
            keys,
            calls,
            accumulators,
            op: changelog::row_kind_index(input),
            group_values,
            counts: Vec::new(),
            results,
            schema,
            input: Arc::new(input.clone()),
            disk: None,
            scratch: Scratch::default(),
        })
    }

    /// Keeps the groups beyond the memory budget on disk.
    pub(super) fn with_disk(mut self, disk: GroupsOnDisk) -> Self {
        self.disk = Some(disk);
        self
    }

    /// Folds a batch in; the changelog rows it causes, if any.
    pub(super) fn push(&mut self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        let output = self.fold_batch(batch)?;
        self.move_out_if_full()?;
        Ok(output)
    }

    fn fold_batch(&mut self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        if batch.num_rows() == 0 {
            return Ok(None);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let output = self.fold_with(batch, &mut scratch);
        self.scratch = scratch;
        output
    }

    fn fold_with(&mut self, batch: &RecordBatch, s: &mut Scratch) -> Result<Option<RecordBatch>> {
        let rows = batch.num_rows();
        let keys = self
            .keys
            .iter()
            .map(|k| k.evaluate(batch)?.into_array(rows))
            .collect::<Result<Vec<_>>>()?;
        s.groups.clear();
        let total_groups = match &mut self.group_values {
            Some(values) => {
                values.intern(&keys, &mut s.groups)?;
                values.len()
            }
            None => {
                s.groups.resize(rows, 0);
                1
            }
        };
        let resident_before = self.counts.len();
        self.counts.resize(total_groups, 0);
        self.move_in(&keys, &s.groups, resident_before)?;
        let retracting = match self.op {
            Some(op) => Some(changelog::retractions(
                batch.column(op),
                "the input of the GROUP BY",
            )?),
            None => None,
        };
        s.rounds.cut(&s.groups, total_groups);
        let first = s.rounds.first_end();

        // The batch in round order: the row at each position, and its group.
        let order = s.rounds.many().then(|| lend(&mut s.rounds.order));
        let permuted = |column: &ArrayRef| -> Result<ArrayRef> {
            match &order {
                Some(order) => Ok(take(column, order, None)?),
                None => Ok(column.clone()),
            }
        };
        s.group_at.clear();
        match &order {
            Some(order) => s
                .group_at
                .extend(order.values().iter().map(|&r| s.groups[r as usize])),
            None => s.group_at.extend_from_slice(&s.groups),
        }
        let group_at = &s.group_at;
        let mut inputs = Vec::with_capacity(self.calls.len());
        for call in self.calls.iter() {
            let (args, filter) = call.evaluate_args(batch)?;
            let args = args.iter().map(permuted).collect::<Result<Vec<_>>>()?;
            let filter = match filter {
                Some(kept) => Some(BooleanArray::from(
                    permuted(&(Arc::new(kept) as ArrayRef))?.to_data(),
                )),
                None => None,
            };
            inputs.push((args, filter));
        }

        // Results before the batch (first round's groups), then after each position.
        let mut pools: Vec<Vec<ArrayRef>> = Vec::with_capacity(self.calls.len());
        for accumulators in &mut self.accumulators {
            pools.push(vec![accumulators.evaluate(&group_at[..first])?]);
        }
        s.outcomes.clear();
        s.outcomes.resize(rows, Outcome::Dropped);
        for round in s.rounds.starts.windows(2) {
            let (start, end) = (round[0], round[1]);
            let round_groups = &group_at[start..end];
            let outcomes = &mut s.outcomes[start..end];
            let (add, retract) = match &retracting {
                Some(retracting) => {
                    let retracts = |at: usize| {
                        let position = start + at;
                        retracting[order
                            .as_ref()
                            .map_or(position, |o| o.value(position) as usize)]
                    };
                    count_changes(&mut self.counts, round_groups, retracts, outcomes)
                }
                None => count_inserts(&mut self.counts, round_groups, outcomes),
            };
            for (call, accumulators) in self.accumulators.iter_mut().enumerate() {
                let (args, filter) = &inputs[call];
                let args: Vec<ArrayRef> =
                    args.iter().map(|a| a.slice(start, end - start)).collect();
                let (add, retract) = match filter {
                    Some(kept) => {
                        let kept = kept.slice(start, end - start);
                        (&add & kept.values(), &retract & kept.values())
                    }
                    None => (add.clone(), retract.clone()),
                };
                accumulators.fold(
                    &args,
                    round_groups,
                    &BooleanArray::new(add, None),
                    &BooleanArray::new(retract, None),
                    total_groups,
                    order.as_ref().map(|order| &order.values()[start..end]),
                )?;
                pools[call].push(accumulators.evaluate(round_groups)?);
            }
            // Only retractions empty a group.
            if retracting.is_some() {
                let emptied: Vec<usize> = (start..end)
                    .filter(|&p| s.outcomes[p] == Outcome::Emptied)
                    .map(|p| group_at[p])
                    .collect();
                if !emptied.is_empty() {
                    for accumulators in &mut self.accumulators {
                        accumulators.clear(&emptied);
                    }
                }
            }
        }
        if let Some(order) = order {
            s.rounds.order = reclaim(order);
        }

        // Each call's results: before the batch at 0.., after position p at first + p.
        let pools = pools
            .iter()
            .map(|parts| {
                let parts: Vec<&dyn datafusion::arrow::array::Array> =
                    parts.iter().map(|p| p.as_ref()).collect();
                Ok(concat(&parts)?)
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        self.changed(&pools, s)?;

        // At most two rows out per row in.
        let rounds = &s.rounds;
        // Every row writes two output slots and keeps as many as it emits (no branch per
        // outcome): the first holds `+I`, `-U` or `-D`, the second `+U`.
        let (source_rows, values, kinds) = (&mut s.source_rows, &mut s.values, &mut s.kinds);
        source_rows.clear();
        source_rows.resize(2 * rows, 0);
        values.clear();
        values.resize(2 * rows, 0);
        kinds.clear();
        kinds.resize(2 * rows, RowKind::Insert);
        let mut emitted = 0;
        for row in 0..rows {
            let position = rounds.position_of(row);
            let after = (first + position) as u32;
            let (first_kind, count) = match s.outcomes[position] {
                Outcome::Dropped => (RowKind::Insert, 0),
                Outcome::Created => (RowKind::Insert, 1),
                Outcome::Changed => (RowKind::UpdateBefore, 2 * s.changed[position] as usize),
                Outcome::Emptied => (RowKind::Delete, 1),
            };
            let first_value = if first_kind == RowKind::Insert {
                after
            } else {
                rounds.before(position) as u32
            };
            source_rows[emitted] = row as u32;
            source_rows[emitted + 1] = row as u32;
            values[emitted] = first_value;
            values[emitted + 1] = after;
            kinds[emitted] = first_kind;
            kinds[emitted + 1] = RowKind::UpdateAfter;
            emitted += count;
        }
        source_rows.truncate(emitted);
        values.truncate(emitted);
        kinds.truncate(emitted);
        if kinds.is_empty() {
            return Ok(None);
        }
        let mut columns = Vec::with_capacity(self.schema.fields().len());
        let source_rows = lend(&mut s.source_rows);
        for key in &keys {
            columns.push(take(key, &source_rows, None)?);
        }
        s.source_rows = reclaim(source_rows);
        let values = lend(&mut s.values);
        for pool in &pools {
            columns.push(take(pool, &values, None)?);
        }
        s.values = reclaim(values);
        columns.push(changelog::kinds_array(&s.kinds));
        Ok(Some(RecordBatch::try_new(self.schema.clone(), columns)?))
    }

    /// Whether the row at each position that may have changed its group's result did
    /// (`s.changed`).
    fn changed(&self, pools: &[ArrayRef], s: &mut Scratch) -> Result<()> {
        let first = s.rounds.first_end();
        let before = |p: usize| s.rounds.before(p);
        s.changed.clear();
        s.changed.resize(s.outcomes.len(), false);
        // Arrow's comparators compare each pair in place (NULL equals NULL, floats by their
        // total order, as Arrow's equality kernels); the row format serves types without one.
        let comparators = pools
            .iter()
            .map(|pool| make_comparator(pool.as_ref(), pool.as_ref(), SortOptions::default()))
            .collect::<std::result::Result<Vec<_>, _>>();
        if let Ok(comparators) = comparators {
            for (p, outcome) in s.outcomes.iter().enumerate() {
                if *outcome == Outcome::Changed {
                    let (old, new) = (before(p), first + p);
                    s.changed[p] = comparators.iter().any(|compare| compare(old, new).is_ne());
                }
            }
            return Ok(());
        }
        let candidates: Vec<usize> = (0..s.outcomes.len())
            .filter(|&p| s.outcomes[p] == Outcome::Changed)
            .collect();
        let gather = |at: &dyn Fn(usize) -> usize| {
            let indices = UInt32Array::from_iter_values(candidates.iter().map(|&p| at(p) as u32));
            pools
                .iter()
                .map(|pool| Ok(take(pool, &indices, None)?))
                .collect::<Result<Vec<ArrayRef>>>()
        };
        let old = self.results.convert_columns(&gather(&before)?)?;
        let new = self.results.convert_columns(&gather(&|p| first + p)?)?;
        for (i, &position) in candidates.iter().enumerate() {
            s.changed[position] = old.row(i) != new.row(i);
        }
        Ok(())
    }
}

/// Counts a round's rows into their groups (`retracts(i)`: whether the `i`-th takes its row
/// back) and says what each did; the rows each call adds and retracts.
fn count_changes(
    counts: &mut [i64],
    groups: &[usize],
    retracts: impl Fn(usize) -> bool,
    outcomes: &mut [Outcome],
) -> (BooleanBuffer, BooleanBuffer) {
    let mut add = BooleanBufferBuilder::new(groups.len());
    let mut retract = BooleanBufferBuilder::new(groups.len());
    for (at, &group) in groups.iter().enumerate() {
        let back = retracts(at);
        let exists = counts[group] > 0;
        // Taking back a row of a group that is not there: dropped (Flink's rule).
        let dropped = back && !exists;
        add.append(!back);
        retract.append(back && !dropped);
        if dropped {
            continue;
        }
        counts[group] += if back { -1 } else { 1 };
        outcomes[at] = if !exists {
            Outcome::Created
        } else if counts[group] == 0 {
            Outcome::Emptied
        } else {
            Outcome::Changed
        };
    }
    (add.finish(), retract.finish())
}

/// `count_changes` for insert-only input: every row adds.
fn count_inserts(
    counts: &mut [i64],
    groups: &[usize],
    outcomes: &mut [Outcome],
) -> (BooleanBuffer, BooleanBuffer) {
    for (outcome, &group) in outcomes.iter_mut().zip(groups) {
        let count = &mut counts[group];
        *outcome = if *count == 0 {
            Outcome::Created
        } else {
            Outcome::Changed
        };
        *count += 1;
    }
    (
        BooleanBuffer::new_set(groups.len()),
        BooleanBuffer::new_unset(groups.len()),
    )
}
