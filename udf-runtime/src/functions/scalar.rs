//! A scalar function as a DataFusion `ScalarUDFImpl`.
//!
//! Signatures are `UserDefined`: our own resolution (exact match, then Flink's implicit
//! widening) picks the overload in `coerce_types`, and the same resolution finds it again
//! from the coerced types in `return_field_from_args` and at run time.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, new_null_array};
use datafusion::arrow::datatypes::{DataType as ArrowType, FieldRef};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_datafusion_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature as DfSignature,
    TypeSignature, Volatility,
};
use udf_core::types::DataType;
use udf_core::{
    ArgColumn, CallContext, FunctionSpec, Metrics, OutputType, ScalarCall, ScalarFunction, Value,
};

use super::binding;
use super::lifecycle::LazyInstance;
use crate::functions::resolve;

/// A registered scalar function, or one query's instance of it.
pub struct ScalarUdf {
    name: String,
    spec: Arc<FunctionSpec>,
    function: Arc<dyn ScalarFunction>,
    /// For functions with `open`/`close`: this adapter's own opened copy.
    opened: LazyInstance<dyn ScalarFunction>,
    has_lifecycle: bool,
    signature: DfSignature,
    metrics: Metrics,
}

impl ScalarUdf {
    pub fn new(
        name: &str,
        function: Arc<dyn ScalarFunction>,
        spec: Arc<FunctionSpec>,
        metrics: Metrics,
    ) -> Self {
        let volatility = if spec.deterministic && spec.constant_folding {
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
        ScalarUdf {
            name: name.to_owned(),
            has_lifecycle: function.instantiate().is_some(),
            spec,
            function,
            opened: LazyInstance::default(),
            signature,
            metrics,
        }
    }

    /// Whether queries need their own instance (the function has `open`/`close`).
    pub fn has_lifecycle(&self) -> bool {
        self.has_lifecycle
    }

    /// A fresh, unopened instance of the same function for one query.
    pub fn for_query(&self) -> ScalarUdf {
        ScalarUdf {
            name: self.name.clone(),
            spec: self.spec.clone(),
            function: self.function.clone(),
            opened: LazyInstance::default(),
            has_lifecycle: self.has_lifecycle,
            signature: self.signature.clone(),
            metrics: self.metrics.clone(),
        }
    }

    /// The instance to call: shared, or opened on first use with the query's job parameters.
    fn instance(&self, args: &ScalarFunctionArgs) -> Result<&dyn ScalarFunction> {
        if !self.has_lifecycle {
            return Ok(self.function.as_ref());
        }
        self.opened
            .get(&self.name, &args.config_options, &self.metrics, || {
                self.function.instantiate().expect("has_lifecycle checked")
            })
    }

    /// Runs one batch, turning errors and panics into errors that name the function, the row
    /// and its argument values.
    fn run(
        &self,
        instance: &dyn ScalarFunction,
        signature: usize,
        args: &[ArgColumn],
        rows: usize,
        output: &DataType,
    ) -> Result<ArrayRef> {
        let mut call = ScalarCall {
            signature,
            args,
            rows,
            output,
            row: 0,
            traced: false,
        };
        let outcome = udf_core::catch_user_panic(|| instance.invoke(&mut call));
        let (row, message) = match outcome {
            Ok(Ok(array)) => return Ok(array),
            Ok(Err(error)) => (call.row, format!("failed: {error}")),
            Err(panic) => {
                // Vectorized kernels do not track rows: replay row by row to find the one.
                let mut traced = ScalarCall {
                    signature,
                    args,
                    rows,
                    output,
                    row: 0,
                    traced: true,
                };
                let replay = udf_core::catch_user_panic(|| instance.invoke(&mut traced));
                let row = if replay.is_err() {
                    traced.row
                } else {
                    call.row
                };
                (row, format!("panicked: {}", panic))
            }
        };
        let values = binding::describe_row(&self.spec, signature, args, row);
        exec_err!(
            "function `{}` {message} (row {row} of the batch, arguments: {values})",
            self.name
        )
    }
}

super::identity::function_identity!(ScalarUdf);

impl ScalarUDFImpl for ScalarUdf {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &DfSignature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[ArrowType]) -> Result<ArrowType> {
        Err(DataFusionError::Internal(format!(
            "`{}` computes its type in return_field_from_args",
            self.name
        )))
    }

    fn coerce_types(&self, arg_types: &[ArrowType]) -> Result<Vec<ArrowType>> {
        binding::coerce(&self.name, &self.spec, arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types = binding::sql_types(&self.name, args.arg_fields.iter().map(|f| f.data_type()))?;
        let resolved = resolve::resolve(&self.name, &self.spec, &types)
            .map_err(|m| plan_datafusion_err!("{m}"))?;
        let signature = &self.spec.signatures[resolved.signature];
        let declared = match &signature.output {
            OutputType::Fixed(t) => t.clone(),
            OutputType::Custom => {
                let literals = args
                    .scalar_arguments
                    .iter()
                    .map(|s| s.map(literal_value).transpose())
                    .collect::<Result<Vec<_>>>()?;
                let arg_types: Vec<DataType> = types
                    .iter()
                    .map(|t| t.clone().unwrap_or_else(DataType::null))
                    .collect();
                let call = CallContext {
                    function: &self.name,
                    signature: resolved.signature,
                    arg_types: &arg_types,
                    literals: &literals,
                };
                self.function
                    .output_type(&call)
                    .map_err(|e| plan_datafusion_err!("{e}"))?
            }
        };
        Ok(binding::result_field(
            &self.name,
            signature,
            &declared,
            args.arg_fields,
        ))
    }

    fn is_strict(&self) -> bool {
        self.spec
            .signatures
            .iter()
            .all(|s| s.args.iter().chain(&s.varargs).all(|a| a.is_strict()))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let instance = self.instance(&args)?;
        let types = binding::sql_types(&self.name, args.arg_fields.iter().map(|f| f.data_type()))?;
        let resolved = resolve::resolve(&self.name, &self.spec, &types)
            .map_err(|m| plan_datafusion_err!("{m}"))?;
        let signature = &self.spec.signatures[resolved.signature];
        let output = DataType::from_arrow_field(args.return_field.as_ref())
            .map_err(|e| DataFusionError::Internal(format!("function `{}`: {e}", self.name)))?;
        // Constant arguments: one evaluation stands for every row, unless the function must
        // run per row (non-deterministic, or constant folding switched off).
        let once = self.spec.deterministic
            && self.spec.constant_folding
            && args
                .args
                .iter()
                .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let rows = if once { 1 } else { args.number_rows };

        let mut columns = Vec::with_capacity(signature.args.len().max(args.args.len()));
        for value in args.args {
            columns.push(match value {
                ColumnarValue::Array(array) => ArgColumn::array(array),
                ColumnarValue::Scalar(scalar) => ArgColumn::scalar(scalar.to_array_of_size(1)?),
            });
        }
        // Trailing optional arguments left out of the call are NULL.
        for param in signature.args.iter().skip(columns.len()) {
            let udf_core::ArgType::Typed(t) = &param.ty else {
                return exec_err!(
                    "function `{}`: argument `{}` is missing",
                    self.name,
                    param.name
                );
            };
            columns.push(ArgColumn::scalar(new_null_array(&t.to_arrow(), 1)));
        }

        let result = self.run(instance, resolved.signature, &columns, rows, &output)?;
        if result.len() != rows {
            return exec_err!(
                "function `{}` returned {} rows for a batch of {rows}",
                self.name,
                result.len()
            );
        }
        if once {
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                &result, 0,
            )?))
        } else {
            Ok(ColumnarValue::Array(result))
        }
    }
}

/// A literal argument as a `Value` (for custom output type inference).
fn literal_value(scalar: &ScalarValue) -> Result<Value> {
    let array = scalar.to_array_of_size(1)?;
    udf_core::convert::array_value(array.as_ref(), 0).map_err(|e| plan_datafusion_err!("{e}"))
}
