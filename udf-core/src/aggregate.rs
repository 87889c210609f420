//! The vectorized contract of aggregate functions, implemented by `#[aggregate_function]`.
//!
//! Accumulators of all groups live in one `Vec` indexed by group: no per-group boxing.
//! Partial aggregates travel between stages as one binary value per group (the accumulator
//! encoded with postcard), which `merge` folds into the final accumulators.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryArray, BinaryBuilder, BooleanArray};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Error;
use crate::group_failure::{Cause, GroupFailure, user_call};
use crate::scalar::ArgColumn;
use crate::spec::FunctionSpec;
use crate::types::DataType;

/// An aggregate function in vectorized form.
pub trait AggregateFunction: Send + Sync + 'static {
    fn spec(&self) -> FunctionSpec;

    /// Empty accumulators for calls of signature `signature` with result type `output`.
    fn create_groups(
        self: Arc<Self>,
        signature: usize,
        output: DataType,
    ) -> Box<dyn GroupAccumulators>;
}

/// The accumulators of every group of one aggregation.
pub trait GroupAccumulators: Send + Sync {
    /// `accumulate` for each selected row, into the accumulator of its group.
    fn accumulate(&mut self, batch: &mut AggregateBatch<'_>) -> Result<(), Error>;

    /// `retract` for each selected row (bounded OVER frames).
    fn retract(&mut self, batch: &mut AggregateBatch<'_>) -> Result<(), Error>;

    /// Folds encoded partial accumulators (from [`GroupAccumulators::state`]) into the groups.
    fn merge(
        &mut self,
        states: &dyn Array,
        groups: &[usize],
        total_groups: usize,
    ) -> Result<(), GroupFailure>;

    /// The encoded accumulators of the emitted groups, which are removed.
    fn state(&mut self, emit: Emit) -> Result<ArrayRef, GroupFailure>;

    /// The results of the emitted groups, which are removed.
    fn evaluate(&mut self, emit: Emit) -> Result<ArrayRef, GroupFailure>;

    /// The result of one group, which stays (OVER windows evaluate after every row).
    fn evaluate_group(&mut self, group: usize) -> Result<ArrayRef, GroupFailure>;

    /// The encoded accumulator of one group, which stays.
    fn state_group(&mut self, group: usize) -> Result<ArrayRef, GroupFailure>;

    /// The results of the listed groups, in order, which stay (an updating GROUP BY
    /// evaluates the groups a row changed). A group may be listed more than once.
    fn evaluate_groups(&mut self, groups: &[usize]) -> Result<ArrayRef, GroupFailure>;

    /// Starts the listed groups over with fresh accumulators (a group that emptied through
    /// retraction is gone; a later row creates it anew, as Flink creates a new accumulator).
    fn clear_groups(&mut self, groups: &[usize]);

    /// The encoded accumulators of groups `0..total_groups`, which stay (a checkpoint of a
    /// streaming aggregation).
    fn save_groups(&mut self, total_groups: usize) -> Result<ArrayRef, GroupFailure>;

    /// Makes the accumulator of each listed group the one `states` encodes at the same
    /// position (a restore from [`GroupAccumulators::save_groups`]); every byte must read, or
    /// the accumulator type changed since.
    fn restore_groups(
        &mut self,
        states: &dyn Array,
        groups: &[usize],
        total_groups: usize,
    ) -> Result<(), Error>;

    /// Memory held, in bytes (an estimate: heap data inside accumulators is not counted).
    fn size(&self) -> usize;
}

/// Which groups to emit: all, or the first `n` (later groups move down by `n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    All,
    First(usize),
}

/// Rows to fold into accumulators.
pub struct AggregateBatch<'a> {
    /// One column per argument, already of the parameter types.
    pub args: &'a [ArgColumn],
    pub rows: usize,
    /// The group of each row.
    pub groups: &'a [usize],
    /// Number of groups seen so far (accumulators to keep).
    pub total_groups: usize,
    /// Rows to skip (`FILTER (WHERE ...)`): only rows where it is true are folded.
    pub filter: Option<&'a BooleanArray>,
    /// The row being folded, kept up to date so an error can name it.
    pub row: usize,
}

impl AggregateBatch<'_> {
    /// Whether `row` passes the FILTER clause.
    #[inline]
    pub fn selected(&self, row: usize) -> bool {
        selected(self.filter, row)
    }
}

/// Whether `row` passes a FILTER clause (true, not NULL).
#[inline]
pub fn selected(filter: Option<&BooleanArray>, row: usize) -> bool {
    filter.is_none_or(|f| f.is_valid(row) && f.value(row))
}

/// What `#[aggregate_function]` implements; [`AggregateFunction`] follows from it.
pub trait AggregateLogic: Send + Sync + Sized + 'static {
    type Acc: Default + Clone + Serialize + DeserializeOwned + Send + Sync + 'static;

    fn spec(&self) -> FunctionSpec;

    fn accumulate(
        &self,
        signature: usize,
        accs: &mut [Self::Acc],
        batch: &mut AggregateBatch<'_>,
    ) -> Result<(), Error>;

    /// Only called when the spec declares the retract capability.
    fn retract(
        &self,
        signature: usize,
        accs: &mut [Self::Acc],
        batch: &mut AggregateBatch<'_>,
    ) -> Result<(), Error>;

    /// Only called when the spec declares the merge capability.
    fn merge(&self, acc: &mut Self::Acc, other: &Self::Acc) -> Result<(), Error>;

    /// Prepares the accumulator of an emitted group for reuse by a new group (Flink's
    /// `resetAccumulator`). Groups are emitted early when the input arrives sorted by the
    /// group keys; the default starts over from `Default`.
    fn reset(&self, acc: &mut Self::Acc) -> Result<(), Error> {
        *acc = Self::Acc::default();
        Ok(())
    }

    /// The result of each accumulator, as a column of type `output`.
    fn evaluate(&self, accs: &[Self::Acc], output: &DataType) -> Result<ArrayRef, Error>;
}

impl<T: AggregateLogic> AggregateFunction for T {
    fn spec(&self) -> FunctionSpec {
        AggregateLogic::spec(self)
    }

    fn create_groups(
        self: Arc<Self>,
        signature: usize,
        output: DataType,
    ) -> Box<dyn GroupAccumulators> {
        Box::new(Groups {
            logic: self,
            signature,
            output,
            accs: Vec::new(),
            spare: Vec::new(),
        })
    }
}

/// One accumulator per group, in group order.
struct Groups<T: AggregateLogic> {
    logic: Arc<T>,
    signature: usize,
    output: DataType,
    accs: Vec<T::Acc>,
    /// Accumulators of emitted groups, reset, for the next new groups.
    spare: Vec<T::Acc>,
}

impl<T: AggregateLogic> Groups<T> {
    fn grow(&mut self, total_groups: usize) {
        while self.accs.len() < total_groups {
            match self.spare.pop() {
                Some(acc) => self.accs.push(acc),
                None => {
                    self.accs.resize_with(total_groups, T::Acc::default);
                    break;
                }
            }
        }
    }

    /// Keeps the accumulators of groups emitted early: the input is sorted by the group
    /// keys, so new groups follow.
    fn recycle(&mut self, emit: Emit, accs: Vec<T::Acc>) -> Result<(), GroupFailure> {
        if let Emit::First(_) = emit {
            for (group, mut acc) in accs.into_iter().enumerate() {
                let logic = &self.logic;
                user_call(|| logic.reset(&mut acc))
                    .map_err(|cause| GroupFailure::of(in_reset(cause), group, &acc))?;
                self.spare.push(acc);
            }
        }
        Ok(())
    }

    fn encode(accs: &[T::Acc]) -> Result<ArrayRef, GroupFailure> {
        let mut out = BinaryBuilder::with_capacity(accs.len(), accs.len() * 16);
        let mut buffer = Vec::new();
        for (group, acc) in accs.iter().enumerate() {
            buffer.clear();
            let bytes = postcard::to_extend(acc, std::mem::take(&mut buffer)).map_err(|e| {
                let cause = Error::msg(format!("the accumulator cannot be encoded: {e}"));
                GroupFailure::of(Cause::Error(cause), group, acc)
            })?;
            out.append_value(&bytes);
            buffer = bytes;
        }
        Ok(Arc::new(out.finish()))
    }

    fn take(&mut self, emit: Emit) -> Vec<T::Acc> {
        match emit {
            Emit::All => std::mem::take(&mut self.accs),
            Emit::First(n) => self.accs.drain(..n.min(self.accs.len())).collect(),
        }
    }

    /// Clones of the listed groups' accumulators, to evaluate together.
    fn gather(&mut self, groups: &[usize]) -> Vec<T::Acc> {
        if let Some(&last) = groups.iter().max() {
            self.grow(last + 1);
        }
        groups.iter().map(|&g| self.accs[g].clone()).collect()
    }

    /// `evaluate` of one group, whose failure names it.
    fn evaluate_one(&self, group: usize, acc: &T::Acc) -> Result<ArrayRef, GroupFailure> {
        user_call(|| self.logic.evaluate(std::slice::from_ref(acc), &self.output))
            .map_err(|cause| GroupFailure::of(cause, group, acc))
    }
}

/// A failed `reset` reads as one (it runs inside the call that emitted the group).
fn in_reset(cause: Cause) -> Cause {
    match cause {
        Cause::Error(error) => Cause::Error(Error::msg(format!("reset failed: {error}"))),
        panic => panic,
    }
}

impl<T: AggregateLogic> GroupAccumulators for Groups<T> {
    fn accumulate(&mut self, batch: &mut AggregateBatch<'_>) -> Result<(), Error> {
        self.grow(batch.total_groups);
        self.logic.accumulate(self.signature, &mut self.accs, batch)
    }

    fn retract(&mut self, batch: &mut AggregateBatch<'_>) -> Result<(), Error> {
        self.grow(batch.total_groups);
        self.logic.retract(self.signature, &mut self.accs, batch)
    }

    fn merge(
        &mut self,
        states: &dyn Array,
        groups: &[usize],
        total_groups: usize,
    ) -> Result<(), GroupFailure> {
        self.grow(total_groups);
        let states = binary(states, "partial aggregates")?;
        // One panic guard around the loop (not one per row); `at` tells which row it was.
        let mut at = 0;
        let (logic, accs) = (&self.logic, &mut self.accs);
        let outcome = user_call(|| {
            for (row, &group) in groups.iter().enumerate() {
                at = row;
                if states.is_null(row) {
                    continue;
                }
                let other: T::Acc = postcard::from_bytes(states.value(row)).map_err(|e| {
                    Error::msg(format!("a partial accumulator cannot be decoded: {e}"))
                })?;
                logic.merge(&mut accs[group], &other)?;
            }
            Ok(())
        });
        outcome.map_err(|cause| GroupFailure::of(cause, groups[at], &self.accs[groups[at]]))
    }

    fn state(&mut self, emit: Emit) -> Result<ArrayRef, GroupFailure> {
        let accs = self.take(emit);
        let state = Self::encode(&accs)?;
        self.recycle(emit, accs)?;
        Ok(state)
    }

    fn evaluate(&mut self, emit: Emit) -> Result<ArrayRef, GroupFailure> {
        let accs = self.take(emit);
        let result = match user_call(|| self.logic.evaluate(&accs, &self.output)) {
            Ok(result) => result,
            Err(cause) => {
                // Found again one by one (only on failure), to name the group.
                let failing = accs
                    .iter()
                    .enumerate()
                    .find_map(|(group, acc)| self.evaluate_one(group, acc).err());
                return Err(failing.unwrap_or(GroupFailure {
                    cause,
                    group: None,
                    accumulator: None,
                }));
            }
        };
        self.recycle(emit, accs)?;
        Ok(result)
    }

    fn evaluate_group(&mut self, group: usize) -> Result<ArrayRef, GroupFailure> {
        self.grow(group + 1);
        self.evaluate_one(group, &self.accs[group])
    }

    fn state_group(&mut self, group: usize) -> Result<ArrayRef, GroupFailure> {
        self.grow(group + 1);
        Self::encode(std::slice::from_ref(&self.accs[group])).map_err(|failure| GroupFailure {
            group: Some(group),
            ..failure
        })
    }

    fn evaluate_groups(&mut self, groups: &[usize]) -> Result<ArrayRef, GroupFailure> {
        let accs = self.gather(groups);
        match user_call(|| self.logic.evaluate(&accs, &self.output)) {
            Ok(result) => Ok(result),
            Err(cause) => {
                let failing = groups
                    .iter()
                    .zip(&accs)
                    .find_map(|(&group, acc)| self.evaluate_one(group, acc).err());
                Err(failing.unwrap_or(GroupFailure {
                    cause,
                    group: None,
                    accumulator: None,
                }))
            }
        }
    }

    fn clear_groups(&mut self, groups: &[usize]) {
        for &group in groups {
            if let Some(acc) = self.accs.get_mut(group) {
                *acc = T::Acc::default();
            }
        }
    }

    fn save_groups(&mut self, total_groups: usize) -> Result<ArrayRef, GroupFailure> {
        self.grow(total_groups);
        Self::encode(&self.accs[..total_groups])
    }

    fn restore_groups(
        &mut self,
        states: &dyn Array,
        groups: &[usize],
        total_groups: usize,
    ) -> Result<(), Error> {
        self.grow(total_groups);
        let states = binary(states, "saved accumulators")?;
        for (row, &group) in groups.iter().enumerate() {
            self.accs[group] = crate::ptf::decode::<T::Acc>(states.value(row))?;
        }
        Ok(())
    }

    fn size(&self) -> usize {
        std::mem::size_of::<Self>()
            + (self.accs.capacity() + self.spare.capacity()) * std::mem::size_of::<T::Acc>()
    }
}

/// `states` as the BINARY column of encoded accumulators; `what` names them in the error.
fn binary<'a>(states: &'a dyn Array, what: &str) -> Result<&'a BinaryArray, Error> {
    states
        .as_any()
        .downcast_ref::<BinaryArray>()
        .ok_or_else(|| {
            Error::msg(format!(
                "{what} arrive as {}, not BINARY",
                states.data_type()
            ))
        })
}
