//! An async scalar function as DataFusion's `AsyncScalarUDFImpl`: the engine plans its
//! calls into an `AsyncFuncExec` and awaits one batch at a time; within a batch, the calls
//! run concurrently under the session's `table.exec.async-scalar.*` options.
//!
//! DataFusion's async wrapper does not forward type coercion, so signatures accept any
//! argument types of the right count; our resolution picks the overload (a planning error
//! if none fits) and the arguments are cast to the parameter types when the batch runs.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{ArrayRef, new_null_array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType as ArrowType, FieldRef};
use datafusion::common::{DataFusionError, Result, exec_err, plan_datafusion_err};
use datafusion::logical_expr::async_udf::AsyncScalarUDFImpl;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature as DfSignature,
    TypeSignature, Volatility,
};
use udf_core::types::DataType;
use udf_core::{ArgColumn, AsyncCall, AsyncScalarFunction, FunctionSpec, Metrics, OutputType};

use super::binding;
use super::lifecycle::LazyInstance;
use crate::functions::resolve::{self, Conversion};
use crate::session::table_options::TableOptions;

pub struct AsyncScalarUdf {
    name: String,
    spec: Arc<FunctionSpec>,
    function: Arc<dyn AsyncScalarFunction>,
    /// For functions with `open`/`close`: this adapter's own opened copy.
    opened: LazyInstance<dyn AsyncScalarFunction>,
    has_lifecycle: bool,
    signature: DfSignature,
    metrics: Metrics,
}

impl AsyncScalarUdf {
    pub fn new(
        name: &str,
        function: Arc<dyn AsyncScalarFunction>,
        spec: Arc<FunctionSpec>,
        metrics: Metrics,
    ) -> Self {
        let volatility = if spec.deterministic {
            Volatility::Immutable
        } else {
            Volatility::Volatile
        };
        let mut arities: Vec<TypeSignature> = Vec::new();
        for signature in &spec.signatures {
            let form = match (signature.args.len(), signature.varargs.is_some()) {
                (_, true) => TypeSignature::VariadicAny,
                (0, false) => TypeSignature::Nullary,
                (n, false) => TypeSignature::Any(n),
            };
            if !arities.contains(&form) {
                arities.push(form);
            }
        }
        // Optional trailing parameters may be left out (`call_named` fills them in).
        let signature = DfSignature::new(TypeSignature::OneOf(arities), volatility);
        AsyncScalarUdf {
            name: name.to_owned(),
            has_lifecycle: function.instantiate().is_some(),
            spec,
            function,
            opened: LazyInstance::default(),
            signature,
            metrics,
        }
    }

    fn instance(&self, args: &ScalarFunctionArgs) -> Result<&dyn AsyncScalarFunction> {
        if !self.has_lifecycle {
            return Ok(self.function.as_ref());
        }
        self.opened
            .get(&self.name, &args.config_options, &self.metrics, || {
                self.function.instantiate().expect("has_lifecycle checked")
            })
    }
}

super::identity::function_identity!(AsyncScalarUdf);

impl ScalarUDFImpl for AsyncScalarUdf {
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

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types = binding::sql_types(&self.name, args.arg_fields.iter().map(|f| f.data_type()))?;
        let resolved = resolve::resolve(&self.name, &self.spec, &types)
            .map_err(|m| plan_datafusion_err!("{m}"))?;
        let signature = &self.spec.signatures[resolved.signature];
        let OutputType::Fixed(declared) = &signature.output else {
            return Err(plan_datafusion_err!(
                "async function `{}` has no fixed result type",
                self.name
            ));
        };
        Ok(binding::result_field(
            &self.name,
            signature,
            declared,
            args.arg_fields,
        ))
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Err(DataFusionError::Internal(format!(
            "async function `{}` is called through its async entry point",
            self.name
        )))
    }
}

#[async_trait]
impl AsyncScalarUDFImpl for AsyncScalarUdf {
    async fn invoke_async_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let instance = self.instance(&args)?;
        let types = binding::sql_types(&self.name, args.arg_fields.iter().map(|f| f.data_type()))?;
        let resolved = resolve::resolve(&self.name, &self.spec, &types)
            .map_err(|m| plan_datafusion_err!("{m}"))?;
        let signature = &self.spec.signatures[resolved.signature];
        let output = DataType::from_arrow_field(args.return_field.as_ref())
            .map_err(|e| DataFusionError::Internal(format!("function `{}`: {e}", self.name)))?;
        let rows = args.number_rows;
        let mut columns = Vec::with_capacity(signature.args.len().max(args.args.len()));
        for (value, conversion) in args.args.into_iter().zip(&resolved.conversions) {
            let (array, scalar) = match value {
                ColumnarValue::Array(array) => (array, false),
                ColumnarValue::Scalar(scalar) => (scalar.to_array_of_size(1)?, true),
            };
            let array = convert(array, conversion)?;
            columns.push(if scalar {
                ArgColumn::scalar(array)
            } else {
                ArgColumn::array(array)
            });
        }
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
        let call = AsyncCall {
            signature: resolved.signature,
            args: &columns,
            rows,
            output: &output,
            options: TableOptions::async_scalar(&args.config_options),
        };
        let outcome = udf_core::catch_user_panic_async(instance.invoke(call)).await;
        let failure = match outcome {
            Ok(Ok(result)) if result.len() == rows => return Ok(ColumnarValue::Array(result)),
            Ok(Ok(result)) => {
                return exec_err!(
                    "function `{}` returned {} rows for a batch of {rows}",
                    self.name,
                    result.len()
                );
            }
            Ok(Err(failure)) => failure,
            Err(panic) => {
                return exec_err!("function `{}` panicked: {}", self.name, panic);
            }
        };
        Err(binding::async_failure(
            &self.name,
            &self.spec,
            resolved.signature,
            &columns,
            failure,
        ))
    }
}

/// An argument as the parameter reads it: cast where resolution says so, dictionaries
/// unpacked.
pub(crate) fn convert(array: ArrayRef, conversion: &Conversion) -> Result<ArrayRef> {
    match (conversion, array.data_type()) {
        (Conversion::Cast(target), _) => Ok(cast(&array, &target.to_arrow())?),
        (Conversion::Keep, ArrowType::Dictionary(_, values)) => {
            let values = values.as_ref().clone();
            Ok(cast(&array, &values)?)
        }
        (Conversion::Keep, _) => Ok(array),
    }
}
