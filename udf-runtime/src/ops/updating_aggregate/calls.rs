//! The aggregate calls of an updating GROUP BY: what each computes from (arguments, FILTER,
//! result field) and its accumulators, one per group — a project aggregate function's
//! (`Folder`, so errors name the function, row and group as in a bounded GROUP BY) or a
//! built-in's (`builtins.rs`).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch};
use datafusion::arrow::datatypes::{FieldRef, Schema, SchemaRef};
use datafusion::common::{Result, exec_datafusion_err, exec_err};
use datafusion::logical_expr::AggregateUDFImpl;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::aggregates::group_values::GroupValues;

use super::aggregator::Aggregator;
use super::builtins;
use super::distinct::Distinct;
use crate::functions::aggregate::folder::{Fold, Folder};
use crate::functions::aggregate::udf::AggregateUdf;
use crate::ops::integer_keys::key_table;

/// What computes a call.
#[derive(Clone, Debug)]
pub(crate) enum CallFunction {
    Ours(Arc<AggregateUdf>),
    /// A built-in, by its lower-case name.
    BuiltIn(String),
}

/// One aggregate call of the GROUP BY.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub(crate) function: CallFunction,
    pub(crate) args: Vec<Arc<dyn PhysicalExpr>>,
    pub(crate) filter: Option<Arc<dyn PhysicalExpr>>,
    /// `DISTINCT`: each argument value counts once per group.
    pub(crate) distinct: bool,
    pub(crate) output: FieldRef,
    pub(crate) arg_fields: Vec<FieldRef>,
}

impl Call {
    /// Gives `accumulators` (this call's) the saved accumulators of `groups`; an error
    /// names the call.
    pub(crate) fn restore_into(
        &self,
        accumulators: &mut dyn Aggregator,
        saved: &ArrayRef,
        groups: &[usize],
        total_groups: usize,
    ) -> Result<()> {
        accumulators
            .restore(saved, groups, total_groups)
            .map_err(|e| {
                exec_datafusion_err!("the saved accumulators of `{self}` do not restore: {e}")
            })
    }

    pub(crate) fn new(
        function: CallFunction,
        args: Vec<Arc<dyn PhysicalExpr>>,
        filter: Option<Arc<dyn PhysicalExpr>>,
        distinct: bool,
        output: FieldRef,
        input: &Schema,
    ) -> Result<Self> {
        let arg_fields = args
            .iter()
            .map(|arg| arg.return_field(input))
            .collect::<Result<Vec<_>>>()?;
        let call = Call {
            function,
            args,
            filter,
            distinct,
            output,
            arg_fields,
        };
        // Planning finds out now whether the call can be computed.
        call.accumulators()?;
        Ok(call)
    }

    /// Empty accumulators for one partition.
    pub(crate) fn accumulators(&self) -> Result<Box<dyn Aggregator>> {
        let accumulators: Box<dyn Aggregator> = match &self.function {
            CallFunction::Ours(udaf) => Box::new(udaf.folder(&self.arg_fields, &self.output)?),
            CallFunction::BuiltIn(name) => {
                builtins::accumulators(name, &self.arg_fields, &self.output)?
            }
        };
        if self.distinct {
            return Ok(Box::new(Distinct::new(accumulators, &self.arg_fields)?));
        }
        Ok(accumulators)
    }

    /// The call's arguments over `batch`, and which rows its FILTER keeps.
    pub(crate) fn evaluate_args(
        &self,
        batch: &RecordBatch,
    ) -> Result<(Vec<ArrayRef>, Option<BooleanArray>)> {
        let rows = batch.num_rows();
        let args = self
            .args
            .iter()
            .map(|arg| arg.evaluate(batch)?.into_array(rows))
            .collect::<Result<Vec<_>>>()?;
        let Some(predicate) = &self.filter else {
            return Ok((args, None));
        };
        let kept = predicate.evaluate(batch)?.into_array(rows)?;
        let Some(kept) = kept.as_any().downcast_ref::<BooleanArray>() else {
            return exec_err!("a FILTER clause gives {}, not BOOLEAN", kept.data_type());
        };
        // NULL counts as false.
        let kept = match kept.nulls() {
            Some(nulls) => BooleanArray::new(kept.values() & nulls.inner(), None),
            None => kept.clone(),
        };
        Ok((args, Some(kept)))
    }

    /// Its arguments and FILTER, for `apply_expressions`.
    pub(crate) fn expressions(&self) -> impl Iterator<Item = &Arc<dyn PhysicalExpr>> {
        self.args.iter().chain(&self.filter)
    }

    /// The call's name, for errors.
    pub(crate) fn name(&self) -> &str {
        match &self.function {
            CallFunction::Ours(udaf) => AggregateUDFImpl::name(udaf.as_ref()),
            CallFunction::BuiltIn(name) => name,
        }
    }
}

/// As EXPLAIN shows it: `name(DISTINCT args) FILTER (WHERE ..)`.
impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let distinct = if self.distinct { "DISTINCT " } else { "" };
        write!(f, "{}({distinct}{})", self.name(), args.join(", "))?;
        if let Some(filter) = &self.filter {
            write!(f, " FILTER (WHERE {filter})")?;
        }
        Ok(())
    }
}

/// The schema of GROUP BY (or PARTITION BY) keys over `input`, to intern them.
pub(crate) fn key_schema(keys: &[Arc<dyn PhysicalExpr>], input: &Schema) -> Result<SchemaRef> {
    let fields = keys
        .iter()
        .map(|key| key.return_field(input))
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(Schema::new(fields)))
}

/// A table numbering the distinct values of `keys` (a `GroupValues`: `integer_keys.rs`'s for
/// one integer key, DataFusion's otherwise); `None`
/// without keys, where every row is in one group.
pub(crate) fn key_ids(
    keys: &[Arc<dyn PhysicalExpr>],
    input: &Schema,
) -> Result<Option<Box<dyn GroupValues>>> {
    if keys.is_empty() {
        return Ok(None);
    }
    Ok(Some(key_table(key_schema(keys, input)?)?))
}

impl Aggregator for Folder {
    fn fold(
        &mut self,
        args: &[ArrayRef],
        groups: &[usize],
        add: &BooleanArray,
        retract: &BooleanArray,
        total_groups: usize,
        rows: Option<&[u32]>,
    ) -> Result<()> {
        // A mask of every row is no mask: the generated loop then tests nothing per row.
        let add = match add.true_count() {
            0 => None,
            all if all == add.len() => Some(None),
            _ => Some(Some(add)),
        };
        if let Some(mask) = add {
            self.fold_rows(Fold::Accumulate, args, groups, mask, total_groups, rows)?;
        }
        if retract.true_count() > 0 {
            self.fold_rows(
                Fold::Retract,
                args,
                groups,
                Some(retract),
                total_groups,
                rows,
            )?;
        }
        Ok(())
    }

    fn evaluate(&mut self, groups: &[usize]) -> Result<ArrayRef> {
        self.evaluate_groups(groups)
    }

    fn merge(&mut self, into: usize, from: usize, total_groups: usize) -> Result<()> {
        self.merge_group(into, from, total_groups)?;
        self.clear_groups(&[from]);
        Ok(())
    }

    fn clear(&mut self, groups: &[usize]) {
        self.clear_groups(groups);
    }

    fn save(&mut self, total_groups: usize) -> Result<ArrayRef> {
        self.save_groups(total_groups)
    }

    fn restore(&mut self, saved: &ArrayRef, groups: &[usize], total_groups: usize) -> Result<()> {
        self.restore_groups(saved, groups, total_groups)
    }
}
