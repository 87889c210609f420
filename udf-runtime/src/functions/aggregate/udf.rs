//! An aggregate function as a DataFusion `AggregateUDFImpl`, with a `GroupsAccumulator`
//! for GROUP BY (accumulators in one vector, indexed by group) and an `Accumulator` for
//! whole-input aggregates and OVER windows (bounded frames call `retract`).
//!
//! Partial aggregates travel as one BINARY state column: each group's accumulator encoded.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType as ArrowType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDFImpl, GroupsAccumulator, Signature as DfSignature, TypeSignature,
    Volatility,
};
use udf_core::types::DataType;
use udf_core::{AggregateFunction, FunctionSpec, OutputType};

use super::distinct::{self, DistinctGroup};
use super::folder::Folder;
use super::group_keys::GroupKeys;
use super::single_group::SingleGroup;
use crate::functions::binding;

/// A registered aggregate function.
#[derive(Clone)]
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

    /// The accumulators of a GROUP BY over arguments of the given fields, for an operator of
    /// this crate's own (the updating GROUP BY).
    pub(crate) fn folder(
        &self,
        arg_fields: &[FieldRef],
        return_field: &FieldRef,
    ) -> Result<Folder> {
        self.groups(arg_fields, return_field, None)
    }

    /// The accumulators of a GROUP BY over arguments of the given fields; `keys` keeps the
    /// group keys that errors name (see `group_keys`).
    pub(super) fn groups(
        &self,
        arg_fields: &[FieldRef],
        return_field: &FieldRef,
        keys: Option<GroupKeys>,
    ) -> Result<Folder> {
        let types: Vec<&ArrowType> = arg_fields.iter().map(|f| f.data_type()).collect();
        let resolved = binding::resolve_arrow(&self.name, &self.spec, &types)?;
        let output = DataType::from_arrow_field(return_field.as_ref())
            .map_err(|e| DataFusionError::Internal(format!("aggregate `{}`: {e}", self.name)))?;
        Ok(Folder {
            name: self.name.clone(),
            spec: self.spec.clone(),
            signature: resolved.signature,
            groups: self
                .function
                .clone()
                .create_groups(resolved.signature, output),
            keys,
        })
    }
}

crate::functions::identity::function_identity!(AggregateUdf);

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
        let folder = self.groups(args.expr_fields, &args.return_field, None)?;
        let group = SingleGroup::new(folder, self.spec.capabilities.retract);
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
            return Ok(vec![distinct::state_field(args.name)]);
        }
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "accumulator"),
            ArrowType::Binary,
            true,
        ))])
    }

    /// DISTINCT calls keep a set of argument rows per group (see `distinct.rs`).
    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        !args.is_distinct
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(Box::new(self.groups(
            args.expr_fields,
            &args.return_field,
            None,
        )?))
    }
}
