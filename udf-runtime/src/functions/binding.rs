//! What every function adapter needs from the engine side: argument types as SQL types,
//! overload resolution and coercion targets.

pub use crate::functions::errors::describe_row;

use datafusion::arrow::datatypes::DataType as ArrowType;
use datafusion::common::{Result, plan_datafusion_err};
use udf_core::FunctionSpec;
use udf_core::types::DataType;

use crate::functions::resolve::{self, Conversion, Resolved};

/// The error of a failed async call: the function, the row and its arguments, and why.
pub fn async_failure(
    function: &str,
    spec: &FunctionSpec,
    signature: usize,
    args: &[udf_core::ArgColumn],
    failure: udf_core::AsyncFailure,
) -> datafusion::common::DataFusionError {
    let reason = &failure.reason;
    let message = match failure.row {
        Some(row) => {
            let values = describe_row(spec, signature, args, row);
            format!("function `{function}` {reason} (row {row} of the batch, arguments: {values})")
        }
        None => format!("function `{function}` {reason}"),
    };
    datafusion::common::DataFusionError::Execution(message)
}

/// The SQL types of arguments; `None` for the NULL literal.
pub fn sql_types<'a>(
    function: &str,
    types: impl Iterator<Item = &'a ArrowType>,
) -> Result<Vec<Option<DataType>>> {
    types
        .map(|t| match t {
            ArrowType::Null => Ok(None),
            t => DataType::from_arrow(t)
                .map(Some)
                .map_err(|e| plan_datafusion_err!("function `{function}`: {e}")),
        })
        .collect()
}

/// The signature a call with these argument types binds to.
pub fn resolve_arrow(
    function: &str,
    spec: &FunctionSpec,
    types: &[&ArrowType],
) -> Result<Resolved> {
    let types = sql_types(function, types.iter().copied())?;
    resolve::resolve(function, spec, &types).map_err(|message| plan_datafusion_err!("{message}"))
}

/// The types the engine must cast the arguments to (`coerce_types`).
pub fn coerce(
    function: &str,
    spec: &FunctionSpec,
    arg_types: &[ArrowType],
) -> Result<Vec<ArrowType>> {
    let Ok(resolved) = resolve_arrow(function, spec, &arg_types.iter().collect::<Vec<_>>()) else {
        // No signature fits: the types are left as they are, and computing the result type
        // reports the mismatch (DataFusion would wrap an error from here in two more).
        return Ok(arg_types.to_vec());
    };
    Ok(arg_types
        .iter()
        .zip(&resolved.conversions)
        .map(|(arrow, conversion)| match (conversion, arrow) {
            // Readers take plain arrays: the engine unpacks dictionaries for us.
            (Conversion::Keep, ArrowType::Dictionary(_, values)) => values.as_ref().clone(),
            (Conversion::Keep, arrow) => arrow.clone(),
            (Conversion::Cast(target), _) => target.to_arrow(),
        })
        .collect())
}

/// The result field of a call of `signature`: the declared type, nullable also when a strict
/// parameter gets a nullable argument (a NULL argument gives NULL without a call).
pub fn result_field(
    function: &str,
    signature: &udf_core::Signature,
    declared: &DataType,
    arg_fields: &[datafusion::arrow::datatypes::FieldRef],
) -> datafusion::arrow::datatypes::FieldRef {
    let strict_null = arg_fields.iter().enumerate().any(|(i, field)| {
        let param = signature.args.get(i).or(signature.varargs.as_ref());
        field.is_nullable() && param.is_some_and(|p| p.is_strict())
    });
    std::sync::Arc::new(datafusion::arrow::datatypes::Field::new(
        function,
        declared.to_arrow(),
        declared.nullable || strict_null,
    ))
}
