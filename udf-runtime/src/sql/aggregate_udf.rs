//! An aggregate function as a DataFusion `AggregateUDFImpl`, with a `GroupsAccumulator`
//! for GROUP BY (accumulators in one vector, indexed by group) and an `Accumulator` for
//! whole-input aggregates and OVER windows (bounded frames call `retract`).
//!
//! Partial aggregates travel as one BINARY state column: each group's accumulator encoded.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray};
use datafusion::arrow::datatypes::{DataType as ArrowType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, not_impl_err, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDFImpl, EmitTo, GroupsAccumulator, Signature as DfSignature,
    TypeSignature, Volatility,
};
use udf_core::types::DataType;
use udf_core::{
    AggregateBatch, AggregateFunction, ArgColumn, Emit, FunctionSpec, GroupAccumulators, OutputType,
};

use super::aggregate_distinct::{self, DistinctGroup};
use super::binding;

/// A registered aggregate function.
pub struct AggregateUdf {
    name: String,
    spec: Arc<FunctionSpec>,
    function: Arc<dyn AggregateFunction>,
    signature: DfSignature,
}

impl AggregateUdf {
    pub fn new(name: &str, function: Arc<dyn AggregateFunction>, spec: Arc<FunctionSpec>) -> Self {
        let volatility = if spec.deterministic {
            Volatility::Immutable
        } else {
            Volatility::Volatile
        };
        let mut signature = DfSignature::new(TypeSignature::UserDefined, volatility);
        if spec.supports_named_arguments() {
            signature.parameter_names = Some(
                spec.signatures[0]
                    .args
                    .iter()
                    .map(|a| a.name.clone())
                    .collect(),
            );
        }
        AggregateUdf {
            name: name.to_owned(),
            spec,
            function,
            signature,
        }
    }

    pub fn spec(&self) -> &FunctionSpec {
        &self.spec
    }

    fn output(&self, signature: usize) -> Result<DataType> {
        match &self.spec.signatures[signature].output {
            OutputType::Fixed(t) => Ok(t.clone()),
            OutputType::Custom => plan_err!("aggregate `{}` has no fixed result type", self.name),
        }
    }

    fn groups(&self, args: &AccumulatorArgs) -> Result<Folder> {
        let types: Vec<&ArrowType> = args.expr_fields.iter().map(|f| f.data_type()).collect();
        let resolved = binding::resolve_arrow(&self.name, &self.spec, &types)?;
        let output = DataType::from_arrow_field(args.return_field.as_ref())
            .map_err(|e| DataFusionError::Internal(format!("aggregate `{}`: {e}", self.name)))?;
        Ok(Folder {
            name: self.name.clone(),
            spec: self.spec.clone(),
            signature: resolved.signature,
            groups: self
                .function
                .clone()
                .create_groups(resolved.signature, output),
        })
    }
}

super::identity::function_identity!(AggregateUdf);

impl AggregateUDFImpl for AggregateUdf {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &DfSignature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[ArrowType]) -> Result<ArrowType> {
        Err(DataFusionError::Internal(format!(
            "`{}` computes its type in return_field",
            self.name
        )))
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let types: Vec<&ArrowType> = arg_fields.iter().map(|f| f.data_type()).collect();
        let resolved = binding::resolve_arrow(&self.name, &self.spec, &types)?;
        let output = self.output(resolved.signature)?;
        Ok(Arc::new(Field::new(
            &self.name,
            output.to_arrow(),
            output.nullable,
        )))
    }

    fn coerce_types(&self, arg_types: &[ArrowType]) -> Result<Vec<ArrowType>> {
        binding::coerce(&self.name, &self.spec, arg_types)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let group = SingleGroup {
            folder: self.groups(&args)?,
            zeros: Vec::new(),
            retract: self.spec.capabilities.retract,
        };
        if !args.is_distinct {
            return Ok(Box::new(group));
        }
        let types: Vec<ArrowType> = args
            .expr_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        Ok(Box::new(DistinctGroup::new(group, &types)?))
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.accumulator(args)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        if args.is_distinct {
            return Ok(vec![aggregate_distinct::state_field(args.name)]);
        }
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "accumulator"),
            ArrowType::Binary,
            true,
        ))])
    }

    /// DISTINCT calls keep a set of argument rows per group (see `aggregate_distinct`).
    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        !args.is_distinct
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(Box::new(self.groups(&args)?))
    }
}

/// The accumulators of one aggregation, with errors and panics turned into query errors that
/// name the function, the row and its arguments.
struct Folder {
    name: String,
    spec: Arc<FunctionSpec>,
    signature: usize,
    groups: Box<dyn GroupAccumulators>,
}

impl std::fmt::Debug for Folder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Folder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Copy)]
enum Fold {
    Accumulate,
    Retract,
}

impl Folder {
    fn fold(
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
        let outcome = catch_unwind(AssertUnwindSafe(|| match fold {
            Fold::Accumulate => groups.accumulate(&mut batch),
            Fold::Retract => groups.retract(&mut batch),
        }));
        let (row, message) = match outcome {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => (batch.row, format!("failed: {error}")),
            Err(panic) => (
                batch.row,
                format!("panicked: {}", binding::panic_message(&panic)),
            ),
        };
        let values = binding::describe_row(&self.spec, self.signature, &args, row);
        exec_err!(
            "aggregate function `{}` {message} (row {row} of the batch, arguments: {values})",
            self.name
        )
    }

    /// Calls that fold no rows (merge, state, evaluate): errors and panics name the function.
    fn guard<T>(
        &mut self,
        what: &str,
        call: impl FnOnce(&mut dyn GroupAccumulators) -> udf_core::Result<T>,
    ) -> Result<T> {
        let groups = &mut self.groups;
        match catch_unwind(AssertUnwindSafe(|| call(groups.as_mut()))) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => exec_err!(
                "aggregate function `{}` failed in {what}: {error}",
                self.name
            ),
            Err(panic) => exec_err!(
                "aggregate function `{}` panicked in {what}: {}",
                self.name,
                binding::panic_message(&panic)
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

/// One group (no GROUP BY, one OVER window partition, or one group of a DISTINCT call).
#[derive(Debug)]
pub(super) struct SingleGroup {
    folder: Folder,
    /// Every row's group index: 0.
    zeros: Vec<usize>,
    retract: bool,
}

impl SingleGroup {
    pub(super) fn name(&self) -> &str {
        &self.folder.name
    }

    fn zeros(&mut self, rows: usize) -> Vec<usize> {
        let mut zeros = std::mem::take(&mut self.zeros);
        zeros.resize(rows, 0);
        zeros
    }

    fn fold(&mut self, fold: Fold, values: &[ArrayRef]) -> Result<()> {
        let rows = values.first().map_or(0, |v| v.len());
        let zeros = self.zeros(rows);
        let result = self.folder.fold(fold, values, &zeros, None, 1);
        self.zeros = zeros;
        result
    }
}

impl Accumulator for SingleGroup {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.fold(Fold::Accumulate, values)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        if !self.retract {
            return exec_err!("aggregate function `{}` has no `retract`", self.folder.name);
        }
        self.fold(Fold::Retract, values)
    }

    fn supports_retract_batch(&self) -> bool {
        self.retract
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let result = self
            .folder
            .guard("get_value", |groups| groups.evaluate_group(0))?;
        ScalarValue::try_from_array(&result, 0)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let state = self
            .folder
            .guard("encoding the accumulator", |groups| groups.state_group(0))?;
        Ok(vec![ScalarValue::try_from_array(&state, 0)?])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let zeros = self.zeros(states[0].len());
        let states = states[0].clone();
        let result = self
            .folder
            .guard("merge", |groups| groups.merge(states.as_ref(), &zeros, 1));
        self.zeros = zeros;
        result
    }

    fn size(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.folder.groups.size()
            + self.zeros.capacity() * std::mem::size_of::<usize>()
    }
}
