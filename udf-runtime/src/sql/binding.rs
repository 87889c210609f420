//! What every function adapter needs from the engine side: argument types as SQL types,
//! overload resolution, coercion targets, and errors that name the function, row and values.

use std::any::Any;

use datafusion::arrow::datatypes::DataType as ArrowType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::common::{Result, plan_datafusion_err};
use udf_core::types::DataType;
use udf_core::{ArgColumn, FunctionSpec};

use crate::resolve::{self, Conversion, Resolved};

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
    let resolved = resolve_arrow(function, spec, &arg_types.iter().collect::<Vec<_>>())?;
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

/// `name => value, ...` for row `row` of a call of signature `signature`.
pub fn describe_row(
    spec: &FunctionSpec,
    signature: usize,
    args: &[ArgColumn],
    row: usize,
) -> String {
    let signature = &spec.signatures[signature];
    let options = FormatOptions::default().with_null("NULL");
    let mut parts = Vec::with_capacity(args.len());
    for (i, column) in args.iter().enumerate() {
        let name = signature
            .args
            .get(i)
            .or(signature.varargs.as_ref())
            .map_or("?", |a| a.name.as_str());
        let array = column.values();
        let index = row & column.index_mask();
        let value = match ArrayFormatter::try_new(array, &options) {
            Ok(formatter) if index < array.len() => {
                let text = formatter.value(index).to_string();
                let quoted = matches!(
                    array.data_type(),
                    ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View
                ) && !array.is_null(index);
                if quoted { format!("'{text}'") } else { text }
            }
            _ => "?".to_owned(),
        };
        parts.push(format!("{name} => {value}"));
    }
    parts.join(", ")
}

pub fn panic_message(panic: &Box<dyn Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}
