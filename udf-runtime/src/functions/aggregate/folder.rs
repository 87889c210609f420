//! The accumulators of one aggregation as DataFusion's `GroupsAccumulator` (all groups'
//! accumulators in one vector, indexed by group), with errors and panics turned into query
//! errors that name the function, the row and its arguments, or the group and its key.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray};
use datafusion::common::{DataFusionError, Result, exec_datafusion_err, not_impl_err};
use datafusion::logical_expr::{EmitTo, GroupsAccumulator};
use udf_core::{AggregateBatch, ArgColumn, Emit, FunctionSpec, GroupAccumulators, GroupFailure};

use super::group_keys::GroupKeys;
use crate::functions::binding;

/// The accumulators of one aggregation, with errors and panics turned into query errors that
/// name the function, the row and its arguments, or the group.
pub(crate) struct Folder {
    pub(super) name: String,
    pub(super) spec: Arc<FunctionSpec>,
    pub(super) signature: usize,
    pub(super) groups: Box<dyn GroupAccumulators>,
    /// The key of each group, when the call takes them (a GROUP BY; see `group_keys`).
    pub(super) keys: Option<GroupKeys>,
}

impl std::fmt::Debug for Folder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Folder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Fold {
    Accumulate,
    Retract,
}

impl Folder {
    pub(crate) fn fold(
        &mut self,
        fold: Fold,
        values: &[ArrayRef],
        groups: &[usize],
        filter: Option<&BooleanArray>,
        total_groups: usize,
    ) -> Result<()> {
        self.fold_rows(fold, values, groups, filter, total_groups, None)
    }

    /// [`Folder::fold`] of rows gathered out of a batch: `rows` gives the batch's row at each
    /// position, which an error names.
    pub(crate) fn fold_rows(
        &mut self,
        fold: Fold,
        values: &[ArrayRef],
        groups: &[usize],
        filter: Option<&BooleanArray>,
        total_groups: usize,
        rows: Option<&[u32]>,
    ) -> Result<()> {
        let values = self.record_keys(values, groups, total_groups)?;
        let args: Vec<ArgColumn> = values.iter().cloned().map(ArgColumn::array).collect();
        let mut batch = AggregateBatch {
            args: &args,
            rows: groups.len(),
            groups,
            total_groups,
            filter,
            row: 0,
        };
        let accumulators = &mut self.groups;
        let outcome = udf_core::catch_user_panic(|| match fold {
            Fold::Accumulate => accumulators.accumulate(&mut batch),
            Fold::Retract => accumulators.retract(&mut batch),
        });
        let (row, message) = match outcome {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => (batch.row, format!("failed: {error}")),
            Err(panic) => (batch.row, format!("panicked: {}", panic)),
        };
        let values = binding::describe_row(&self.spec, self.signature, &args, row);
        let key = self.key_of(groups.get(row).copied());
        let at = rows
            .and_then(|rows| rows.get(row))
            .map_or(row, |&r| r as usize);
        Err(exec_datafusion_err!(
            "aggregate function `{}` {message} (row {at} of the batch, arguments: {values}){key}",
            self.name
        ))
    }

    /// The results of the listed groups, which stay (an updating GROUP BY).
    pub(crate) fn evaluate_groups(&mut self, groups: &[usize]) -> Result<ArrayRef> {
        self.guard("get_value", |accumulators| {
            accumulators.evaluate_groups(groups)
        })
    }

    /// Folds group `from`'s accumulator into group `into`'s with `merge` (session windows
    /// that a row joins); `from` stays as it was.
    pub(crate) fn merge_group(
        &mut self,
        into: usize,
        from: usize,
        total_groups: usize,
    ) -> Result<()> {
        let state = self.guard("encoding accumulators", |accumulators| {
            accumulators.state_group(from)
        })?;
        self.guard("merge", |accumulators| {
            accumulators.merge(state.as_ref(), &[into], total_groups)
        })
    }

    /// Fresh accumulators for the listed groups (they emptied through retraction).
    pub(crate) fn clear_groups(&mut self, groups: &[usize]) {
        self.groups.clear_groups(groups);
    }

    /// The encoded accumulators of groups `0..total_groups`, which stay (a checkpoint).
    pub(crate) fn save_groups(&mut self, total_groups: usize) -> Result<ArrayRef> {
        self.guard("encoding accumulators", |accumulators| {
            accumulators.save_groups(total_groups)
        })
    }

    /// Sets the listed groups' accumulators to those `states` (of `save_groups`) encodes.
    pub(crate) fn restore_groups(
        &mut self,
        states: &ArrayRef,
        groups: &[usize],
        total_groups: usize,
    ) -> Result<()> {
        self.groups
            .restore_groups(states.as_ref(), groups, total_groups)
            .map_err(|error| {
                exec_datafusion_err!(
                    "the saved accumulators of aggregate function `{}` do not read: {error}",
                    self.name
                )
            })
    }

    /// Keeps the keys of new groups, if the call takes them after its arguments; returns
    /// the arguments.
    fn record_keys<'a>(
        &mut self,
        values: &'a [ArrayRef],
        groups: &[usize],
        total_groups: usize,
    ) -> Result<&'a [ArrayRef]> {
        let Some(keys) = &mut self.keys else {
            return Ok(values);
        };
        let (arguments, key_columns) = values.split_at(values.len().saturating_sub(keys.width()));
        keys.record(key_columns, groups, total_groups)?;
        Ok(arguments)
    }

    /// ` (group key: a, 1)`, when the group and its key are known.
    fn key_of(&self, group: Option<usize>) -> String {
        match (group, &self.keys) {
            (Some(group), Some(keys)) => keys
                .describe(group)
                .map(|key| format!(" (group key: {key})"))
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// Calls that fold no rows (merge, state, evaluate): errors and panics name the
    /// function, and the group when the failure concerns one.
    pub(super) fn guard<T>(
        &mut self,
        what: &str,
        call: impl FnOnce(&mut dyn GroupAccumulators) -> Result<T, GroupFailure>,
    ) -> Result<T> {
        let groups = &mut self.groups;
        match udf_core::catch_user_panic(|| call(groups.as_mut())) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(failure)) => Err(self.failed(what, &failure)),
            Err(panic) => Err(exec_datafusion_err!(
                "aggregate function `{}` panicked in {what}: {panic}",
                self.name
            )),
        }
    }

    fn failed(&self, what: &str, failure: &GroupFailure) -> DataFusionError {
        exec_datafusion_err!(
            "aggregate function `{}` {}{}",
            self.name,
            failure.describe(what),
            self.key_of(failure.group)
        )
    }
}

fn emit(emit_to: EmitTo) -> Emit {
    match emit_to {
        EmitTo::All => Emit::All,
        EmitTo::First(n) => Emit::First(n),
    }
}

impl GroupsAccumulator for Folder {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.fold(
            Fold::Accumulate,
            values,
            group_indices,
            opt_filter,
            total_num_groups,
        )
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let result = self.guard("get_value", |groups| groups.evaluate(emit(emit_to)))?;
        if let Some(keys) = &mut self.keys {
            keys.forget(emit(emit_to));
        }
        Ok(result)
    }

    /// The encoded accumulators, then the groups' keys when the call takes them.
    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let state = self.guard("encoding accumulators", |groups| {
            groups.state(emit(emit_to))
        })?;
        let mut columns = vec![state];
        if let Some(keys) = &mut self.keys {
            columns.extend(keys.emit(emit(emit_to))?);
        }
        Ok(columns)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        let values = self.record_keys(values, group_indices, total_num_groups)?;
        let states = values[0].clone();
        self.guard("merge", |groups| {
            groups.merge(states.as_ref(), group_indices, total_num_groups)
        })
    }

    fn size(&self) -> usize {
        self.groups.size() + self.keys.as_ref().map_or(0, GroupKeys::size)
    }

    /// Never called: `supports_convert_to_state` keeps its default, `false`.
    fn convert_to_state(
        &self,
        _values: &[ArrayRef],
        _opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        not_impl_err!(
            "aggregate function `{}` does not convert rows to partial states",
            self.name
        )
    }
}
