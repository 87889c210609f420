//! The vectorized contract of table aggregate functions, implemented by
//! `#[table_aggregate_function]`: accumulators per group as for aggregates, and rows emitted
//! per group through a collector.

use std::sync::Arc;

use arrow::array::ArrayRef;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Error;
use crate::aggregate::AggregateBatch;
use crate::collector::{Collector, Emitted, RetractableCollector, RowKind};
use crate::convert::ResultValue;
use crate::group_failure::{Cause, GroupFailure, user_call};
use crate::spec::FunctionSpec;
use crate::types::DataType;

/// Which emit methods a table aggregate has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Emits {
    /// `emit_value`: the whole current result of a group.
    pub value: bool,
    /// `emit_update_with_retract`: only what changed, retracting what it replaces.
    pub update_with_retract: bool,
}

/// A table aggregate function in vectorized form.
pub trait TableAggregateFunction: Send + Sync + 'static {
    fn spec(&self) -> FunctionSpec;

    fn emits(&self) -> Emits;

    /// Empty accumulators for calls of `signature`, emitting rows of SQL type `row_type`.
    fn create_groups(
        self: Arc<Self>,
        signature: usize,
        row_type: DataType,
    ) -> Result<Box<dyn TableGroups>, Error>;
}

/// The accumulators of every group, and the rows emitted so far.
pub trait TableGroups: Send + Sync {
    fn accumulate(&mut self, batch: &mut AggregateBatch<'_>) -> Result<(), Error>;

    /// `emit_value` for `group`, its rows marked `kind` (`+I` for a result, `-D` to take back
    /// the result emitted before the latest rows).
    fn emit_value(&mut self, group: usize, kind: RowKind) -> Result<(), GroupFailure>;

    /// `emit_update_with_retract` for `group`.
    fn emit_update_with_retract(&mut self, group: usize) -> Result<(), GroupFailure>;

    /// The accumulator of `group`, encoded (to combine partial aggregations).
    fn state(&mut self, group: usize) -> Result<Vec<u8>, GroupFailure>;

    /// Folds an encoded partial accumulator into `group` with `merge`.
    fn merge_state(&mut self, group: usize, state: &[u8]) -> Result<(), GroupFailure>;

    /// Makes `group`'s accumulator the one `state` encodes (`state` of a checkpoint); every
    /// byte must read, or the accumulator type changed since.
    fn restore_state(&mut self, group: usize, state: &[u8]) -> Result<(), Error>;

    /// The rows emitted since the last call: one column of the row type, and the group and
    /// kind of each row.
    fn take_emitted(&mut self) -> Result<(ArrayRef, Vec<usize>, Vec<RowKind>), Error>;

    /// Memory held, in bytes (an estimate).
    fn size(&self) -> usize;
}

/// What `#[table_aggregate_function]` implements; [`TableAggregateFunction`] follows from it.
pub trait TableAggregateLogic: Send + Sync + Sized + 'static {
    type Acc: Default + Clone + Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The emitted row type.
    type Row: ResultValue;

    const EMITS: Emits;

    fn spec(&self) -> FunctionSpec;

    fn accumulate(
        &self,
        signature: usize,
        accs: &mut [Self::Acc],
        batch: &mut AggregateBatch<'_>,
    ) -> Result<(), Error>;

    /// Only called when the spec declares the merge capability.
    fn merge(&self, acc: &mut Self::Acc, other: &Self::Acc) -> Result<(), Error>;

    /// Only called when [`Emits::value`] is set.
    fn emit_value(&self, acc: &Self::Acc, out: &mut Collector<'_, Self::Row>) -> Result<(), Error>;

    /// Only called when [`Emits::update_with_retract`] is set.
    fn emit_update_with_retract(
        &self,
        acc: &Self::Acc,
        out: &mut RetractableCollector<'_, Self::Row>,
    ) -> Result<(), Error>;
}

impl<T: TableAggregateLogic> TableAggregateFunction for T
where
    <T::Row as ResultValue>::Builder: Send + Sync,
{
    fn spec(&self) -> FunctionSpec {
        TableAggregateLogic::spec(self)
    }

    fn emits(&self) -> Emits {
        T::EMITS
    }

    fn create_groups(
        self: Arc<Self>,
        signature: usize,
        row_type: DataType,
    ) -> Result<Box<dyn TableGroups>, Error> {
        Ok(Box::new(Groups {
            emitted: Emitted::new(&row_type, 0)?,
            logic: self,
            signature,
            accs: Vec::new(),
        }))
    }
}

struct Groups<T: TableAggregateLogic> {
    logic: Arc<T>,
    signature: usize,
    accs: Vec<T::Acc>,
    emitted: Emitted<T::Row>,
}

impl<T: TableAggregateLogic> Groups<T> {
    fn acc(&mut self, group: usize) -> &T::Acc {
        if self.accs.len() <= group {
            self.accs.resize_with(group + 1, T::Acc::default);
        }
        &self.accs[group]
    }

    /// The call's failure, or else the first error a row caused while the function was
    /// emitting, naming the group and its accumulator.
    fn emitted_ok(&mut self, group: usize, result: Result<(), Cause>) -> Result<(), GroupFailure> {
        let cause = match result {
            Err(cause) => cause,
            Ok(()) => match self.emitted.take_error() {
                Some(error) => Cause::Error(error),
                None => return Ok(()),
            },
        };
        Err(GroupFailure::of(cause, group, &self.accs[group]))
    }
}

impl<T: TableAggregateLogic> TableGroups for Groups<T>
where
    <T::Row as ResultValue>::Builder: Send + Sync,
{
    fn accumulate(&mut self, batch: &mut AggregateBatch<'_>) -> Result<(), Error> {
        if self.accs.len() < batch.total_groups {
            self.accs.resize_with(batch.total_groups, T::Acc::default);
        }
        self.logic.accumulate(self.signature, &mut self.accs, batch)
    }

    fn emit_value(&mut self, group: usize, kind: RowKind) -> Result<(), GroupFailure> {
        self.acc(group);
        let acc = &self.accs[group];
        let (logic, emitted) = (&self.logic, &mut self.emitted);
        let result =
            user_call(|| logic.emit_value(acc, &mut emitted.collector_of_kind(group, kind)));
        self.emitted_ok(group, result)
    }

    fn emit_update_with_retract(&mut self, group: usize) -> Result<(), GroupFailure> {
        self.acc(group);
        let acc = &self.accs[group];
        let (logic, emitted) = (&self.logic, &mut self.emitted);
        let result =
            user_call(|| logic.emit_update_with_retract(acc, &mut emitted.retractable(group)));
        self.emitted_ok(group, result)
    }

    fn state(&mut self, group: usize) -> Result<Vec<u8>, GroupFailure> {
        let acc = self.acc(group);
        postcard::to_stdvec(acc).map_err(|e| {
            let cause = Error::msg(format!("the accumulator cannot be encoded: {e}"));
            GroupFailure::of(Cause::Error(cause), group, acc)
        })
    }

    fn merge_state(&mut self, group: usize, state: &[u8]) -> Result<(), GroupFailure> {
        let other: T::Acc = postcard::from_bytes(state)
            .map_err(|e| Error::msg(format!("a partial accumulator cannot be decoded: {e}")))?;
        self.acc(group);
        let (logic, acc) = (&self.logic, &mut self.accs[group]);
        user_call(|| logic.merge(acc, &other))
            .map_err(|cause| GroupFailure::of(cause, group, &self.accs[group]))
    }

    fn restore_state(&mut self, group: usize, state: &[u8]) -> Result<(), Error> {
        let acc = crate::ptf::decode::<T::Acc>(state)?;
        self.acc(group);
        self.accs[group] = acc;
        Ok(())
    }

    fn take_emitted(&mut self) -> Result<(ArrayRef, Vec<usize>, Vec<RowKind>), Error> {
        self.emitted.finish()
    }

    fn size(&self) -> usize {
        std::mem::size_of::<Self>() + self.accs.capacity() * std::mem::size_of::<T::Acc>()
    }
}
