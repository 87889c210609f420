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

use datafusion::arrow::array::{
    ArrayRef, BooleanArray, BooleanBufferBuilder, RecordBatch, UInt32Array,
};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::compute::kernels::boolean::and;
use datafusion::arrow::compute::kernels::cmp::not_distinct;
use datafusion::arrow::compute::{concat, take};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::Result;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::aggregates::group_values::GroupValues;
use udf_core::RowKind;

use super::aggregator::Aggregator;
use super::calls::{Call, key_ids};
use super::on_disk::GroupsOnDisk;
use crate::changelog;

/// What one input row does to its group.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A taken-back row of a group that does not exist.
    Dropped,
    /// The group is new: `+I` new.
    Created,
    /// The group's result may have changed: `-U` old, `+U` new unless equal.
    Changed,
    /// The group emptied: `-D` old.
    Emptied,
}

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
    /// Per group, reused across batches: rows of the batch so far, and the position of the
    /// last one (zeroed again after each batch).
    pub(super) seen: Vec<u32>,
    pub(super) last_position: Vec<u32>,
    /// With the disk backend: the groups moved out of memory (`on_disk.rs`).
    pub(super) disk: Option<GroupsOnDisk>,
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
            seen: Vec::new(),
            last_position: Vec::new(),
            disk: None,
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
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(None);
        }
        let keys = self
            .keys
            .iter()
            .map(|k| k.evaluate(batch)?.into_array(rows))
            .collect::<Result<Vec<_>>>()?;
        let mut groups = Vec::with_capacity(rows);
        let total_groups = match &mut self.group_values {
            Some(values) => {
                values.intern(&keys, &mut groups)?;
                values.len()
            }
            None => {
                groups.resize(rows, 0);
                1
            }
        };
        let resident_before = self.counts.len();
        self.counts.resize(total_groups, 0);
        self.move_in(&keys, &groups, resident_before)?;
        let retracting = match self.op {
            Some(op) => Some(changelog::retractions(
                batch.column(op),
                "the input of the GROUP BY",
            )?),
            None => None,
        };
        let rounds = self.rounds(&groups, total_groups);

        // The batch in round order: positions, each the row at that place.
        let permuted = |column: &ArrayRef| -> Result<ArrayRef> {
            match &rounds.order {
                Some(order) => Ok(take(column, order, None)?),
                None => Ok(column.clone()),
            }
        };
        let row_at = |position: usize| match &rounds.order {
            Some(order) => order.value(position) as usize,
            None => position,
        };
        let group_at: Vec<usize> = match &rounds.order {
            Some(order) => order.values().iter().map(|&r| groups[r as usize]).collect(),
            None => groups.clone(),
        };
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
        let first = rounds.starts[1];
        let mut pools: Vec<Vec<ArrayRef>> = Vec::with_capacity(self.calls.len());
        for accumulators in &mut self.accumulators {
            pools.push(vec![accumulators.evaluate(&group_at[..first])?]);
        }
        let mut outcomes = vec![Outcome::Dropped; rows];
        for round in rounds.starts.windows(2) {
            let (start, end) = (round[0], round[1]);
            let round_groups = &group_at[start..end];
            let (add, retract) = match &retracting {
                Some(retracting) => self.count_changes(
                    round_groups,
                    |at| retracting[row_at(start + at)],
                    &mut outcomes[start..end],
                ),
                None => self.count_inserts(round_groups, &mut outcomes[start..end]),
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
                    rounds
                        .order
                        .as_ref()
                        .map(|order| &order.values()[start..end]),
                )?;
                pools[call].push(accumulators.evaluate(round_groups)?);
            }
            // Only retractions empty a group.
            let emptied: Vec<usize> = match retracting {
                Some(_) => (start..end)
                    .filter(|&p| outcomes[p] == Outcome::Emptied)
                    .map(|p| group_at[p])
                    .collect(),
                None => Vec::new(),
            };
            if !emptied.is_empty() {
                for accumulators in &mut self.accumulators {
                    accumulators.clear(&emptied);
                }
            }
        }
        for &group in &groups {
            self.seen[group] = 0;
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
        let before = |position: usize| -> u32 {
            if position < first {
                position as u32
            } else {
                (first + rounds.previous[position] as usize) as u32
            }
        };
        let changed = self.changed(&pools, &outcomes, first, &before)?;

        // At most two rows out per row in.
        let mut source_rows = Vec::with_capacity(2 * rows);
        let mut values = Vec::with_capacity(2 * rows);
        let mut kinds = Vec::with_capacity(2 * rows);
        for row in 0..rows {
            let position = match &rounds.position {
                Some(positions) => positions[row] as usize,
                None => row,
            };
            let after = (first + position) as u32;
            let mut emit = |value: u32, kind: RowKind| {
                source_rows.push(row as u32);
                values.push(value);
                kinds.push(kind);
            };
            match outcomes[position] {
                Outcome::Dropped => {}
                Outcome::Created => emit(after, RowKind::Insert),
                Outcome::Changed => {
                    if changed[position] {
                        emit(before(position), RowKind::UpdateBefore);
                        emit(after, RowKind::UpdateAfter);
                    }
                }
                Outcome::Emptied => emit(before(position), RowKind::Delete),
            }
        }
        if kinds.is_empty() {
            return Ok(None);
        }
        let source_rows = UInt32Array::from(source_rows);
        let values = UInt32Array::from(values);
        let mut columns = Vec::with_capacity(self.schema.fields().len());
        for key in &keys {
            columns.push(take(key, &source_rows, None)?);
        }
        for pool in &pools {
            columns.push(take(pool, &values, None)?);
        }
        columns.push(changelog::kinds_array(&kinds));
        Ok(Some(RecordBatch::try_new(self.schema.clone(), columns)?))
    }

    /// Counts a round's rows into their groups (`retracts(i)`: whether the `i`-th takes its
    /// row back) and says what each did; the rows each call adds and retracts.
    fn count_changes(
        &mut self,
        groups: &[usize],
        retracts: impl Fn(usize) -> bool,
        outcomes: &mut [Outcome],
    ) -> (BooleanBuffer, BooleanBuffer) {
        let mut add = BooleanBufferBuilder::new(groups.len());
        let mut retract = BooleanBufferBuilder::new(groups.len());
        for (at, &group) in groups.iter().enumerate() {
            let back = retracts(at);
            let exists = self.counts[group] > 0;
            // Taking back a row of a group that is not there: dropped (Flink's rule).
            let dropped = back && !exists;
            add.append(!back);
            retract.append(back && !dropped);
            if dropped {
                continue;
            }
            self.counts[group] += if back { -1 } else { 1 };
            outcomes[at] = if !exists {
                Outcome::Created
            } else if self.counts[group] == 0 {
                Outcome::Emptied
            } else {
                Outcome::Changed
            };
        }
        (add.finish(), retract.finish())
    }

    /// `count_changes` for insert-only input: every row adds.
    fn count_inserts(
        &mut self,
        groups: &[usize],
        outcomes: &mut [Outcome],
    ) -> (BooleanBuffer, BooleanBuffer) {
        for (outcome, &group) in outcomes.iter_mut().zip(groups) {
            let count = &mut self.counts[group];
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

    /// Whether each row that may have changed its group's result did.
    fn changed(
        &self,
        pools: &[ArrayRef],
        outcomes: &[Outcome],
        first: usize,
        before: &dyn Fn(usize) -> u32,
    ) -> Result<Vec<bool>> {
        let mut changed = vec![false; outcomes.len()];
        let candidates: Vec<usize> = (0..outcomes.len())
            .filter(|&p| outcomes[p] == Outcome::Changed)
            .collect();
        if candidates.is_empty() {
            return Ok(changed);
        }
        let old = UInt32Array::from_iter_values(candidates.iter().map(|&p| before(p)));
        let new = UInt32Array::from_iter_values(candidates.iter().map(|&p| (first + p) as u32));
        let gather = |indices: &UInt32Array| {
            pools
                .iter()
                .map(|pool| Ok(take(pool, indices, None)?))
                .collect::<Result<Vec<ArrayRef>>>()
        };
        let (old, new) = (gather(&old)?, gather(&new)?);
        // Arrow's comparison kernels where every result type has one (NULL equals NULL);
        // the row format otherwise (nested types).
        let same = old
            .iter()
            .zip(&new)
            .map(|(old, new)| not_distinct(old, new))
            .try_fold(None, |all: Option<BooleanArray>, same| {
                let same = same?;
                Ok::<_, datafusion::arrow::error::ArrowError>(Some(match all {
                    Some(all) => and(&all, &same)?,
                    None => same,
                }))
            });
        if let Ok(Some(same)) = same {
            for (&position, same) in candidates.iter().zip(same.values().iter()) {
                changed[position] = !same;
            }
            return Ok(changed);
        }
        let old = self.results.convert_columns(&old)?;
        let new = self.results.convert_columns(&new)?;
        for (i, &position) in candidates.iter().enumerate() {
            changed[position] = old.row(i) != new.row(i);
        }
        Ok(changed)
    }

    /// Cuts the batch into rounds (see the module's documentation).
    fn rounds(&mut self, groups: &[usize], total_groups: usize) -> Rounds {
        self.seen.resize(total_groups, 0);
        self.last_position.resize(total_groups, 0);
        let rows = groups.len();
        let mut round_of = Vec::with_capacity(rows);
        let mut rounds = 0;
        for &group in groups {
            let round = self.seen[group];
            self.seen[group] += 1;
            rounds = rounds.max(round as usize + 1);
            round_of.push(round);
        }
        // Counting sort by round, keeping the rows' order within a round.
        let mut starts = vec![0usize; rounds + 1];
        for &round in &round_of {
            starts[round as usize + 1] += 1;
        }
        for round in 0..rounds {
            starts[round + 1] += starts[round];
        }
        if rounds == 1 {
            return Rounds {
                order: None,
                position: None,
                starts,
                previous: Vec::new(),
            };
        }
        let mut previous = vec![0u32; rows];
        let mut next = starts.clone();
        let mut order = vec![0u32; rows];
        let mut position = vec![0u32; rows];
        for (row, &round) in round_of.iter().enumerate() {
            let at = next[round as usize];
            next[round as usize] += 1;
            order[at] = row as u32;
            position[row] = at as u32;
        }
        for (at, &row) in order.iter().enumerate() {
            let group = groups[row as usize];
            if round_of[row as usize] > 0 {
                previous[at] = self.last_position[group];
            }
            self.last_position[group] = at as u32;
        }
        Rounds {
            order: Some(UInt32Array::from(order)),
            position: Some(position),
            starts,
            previous,
        }
    }
}

/// A batch cut into rounds.
struct Rounds {
    /// The row at each position; `None` when there is one round (positions are rows).
    order: Option<UInt32Array>,
    /// The position of each row; `None` as above.
    position: Option<Vec<u32>>,
    /// Where each round starts, and the end.
    starts: Vec<usize>,
    /// For a position after the first round: the position of its group's row before.
    previous: Vec<u32>,
}
