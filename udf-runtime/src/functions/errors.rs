//! Error texts that name the function, the row and its argument values.

use udf_core::arrow::datatypes::DataType as ArrowType;
use udf_core::arrow::util::display::{ArrayFormatter, FormatOptions};
use udf_core::{ArgColumn, FunctionSpec};

/// Value `index` of `array` as error messages show it (`NULL` for a null; `None` if the
/// type cannot be shown or the index is out of range).
pub fn display_value(array: &dyn udf_core::arrow::array::Array, index: usize) -> Option<String> {
    let options = FormatOptions::default().with_null("NULL");
    let formatter = ArrayFormatter::try_new(array, &options).ok()?;
    (index < array.len()).then(|| formatter.value(index).to_string())
}

/// `name => value, ...` for row `row` of a call of signature `signature`.
pub fn describe_row(
    spec: &FunctionSpec,
    signature: usize,
    args: &[ArgColumn],
    row: usize,
) -> String {
    let signature = &spec.signatures[signature];
    let mut parts = Vec::with_capacity(args.len());
    for (i, column) in args.iter().enumerate() {
        let name = signature
            .args
            .get(i)
            .or(signature.varargs.as_ref())
            .map_or("?", |a| a.name.as_str());
        let array = column.values();
        let index = row & column.index_mask();
        let value = match display_value(array, index) {
            Some(text) => {
                let quoted = matches!(
                    array.data_type(),
                    ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View
                ) && !array.is_null(index);
                if quoted { format!("'{text}'") } else { text }
            }
            None => "?".to_owned(),
        };
        parts.push(format!("{name} => {value}"));
    }
    parts.join(", ")
}
