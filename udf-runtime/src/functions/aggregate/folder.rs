//! The accumulators of one aggregation as DataFusion's `GroupsAccumulator` (all groups'
//! accumulators in one vector, indexed by group), with errors and panics turned into query
//! errors that name the function, the row and its arguments.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray};
use datafusion::common::{Result, exec_err, not_impl_err};
use datafusion::logical_expr::{EmitTo, GroupsAccumulator};
use udf_core::{AggregateBatch, ArgColumn, Emit, FunctionSpec, GroupAccumulators};

use crate::functions::binding;

/// The accumulators of one aggregation, with errors and panics turned into query errors that
/// name the function, the row and its arguments.
pub(super) struct Folder {
    pub(super) name: String,
    pub(super) spec: Arc<FunctionSpec>,
    pub(super) signature: usize,
    pub(super) groups: Box<dyn GroupAccumulators>,
}

impl std::fmt::Debug for Folder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Folder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Copy)]
pub(super) enum Fold {
    Accumulate,
    Retract,
}

impl Folder {
    pub(super) fn fold(
        &mut self,
        fold: Fold,
        values: &[ArrayRef],
        groups: &[usize],
        filter: Option<&BooleanArray>,
        total_groups: usize,
    ) -> Result<()> {
        let args: Vec<ArgColumn> = values.iter().cloned().map(ArgColumn::array).collect();
        let mut batch = AggregateBatch {
            args: &args,
            rows: groups.len(),
            groups,
            total_groups,
            filter,
            row: 0,
        };
        let groups = &mut self.groups;
        let outcome = udf_core::catch_user_panic(|| match fold {
            Fold::Accumulate => groups.accumulate(&mut batch),
            Fold::Retract => groups.retract(&mut batch),
        });
        let (row, message) = match outcome {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => (batch.row, format!("failed: {error}")),
            Err(panic) => (batch.row, format!("panicked: {}", panic)),
        };
        let values = binding::describe_row(&self.spec, self.signature, &args, row);
        exec_err!(
            "aggregate function `{}` {message} (row {row} of the batch, arguments: {values})",
            self.name
        )
    }

    /// Calls that fold no rows (merge, state, evaluate): errors and panics name the function.
    pub(super) fn guard<T>(
        &mut self,
        what: &str,
        call: impl FnOnce(&mut dyn GroupAccumulators) -> udf_core::Result<T>,
    ) -> Result<T> {
        let groups = &mut self.groups;
        match udf_core::catch_user_panic(|| call(groups.as_mut())) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => exec_err!(
                "aggregate function `{}` failed in {what}: {error}",
                self.name
            ),
            Err(panic) => exec_err!(
                "aggregate function `{}` panicked in {what}: {}",
                self.name,
                panic
            ),
        }
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
        self.guard("get_value", |groups| groups.evaluate(emit(emit_to)))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.guard("encoding accumulators", |groups| {
            groups.state(emit(emit_to))
        })?])
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        let states = values[0].clone();
        self.guard("merge", |groups| {
            groups.merge(states.as_ref(), group_indices, total_num_groups)
        })
    }

    fn size(&self) -> usize {
        self.groups.size()
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
