//! `StringConcatFunction` from the API digest: the accumulator is a string buffer.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

/// The text joined so far (Java's `StringBuilder` accumulator).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Joined {
    pub text: String,
}

/// Joins the non-NULL values with `separator` (none when it is NULL), in input order.
#[derive(Clone, Debug, Default)]
pub struct StringConcatFunction;

#[aggregate_function(name = "string_concat", merge)]
impl StringConcatFunction {
    fn accumulate(acc: &mut Joined, value: &str, separator: Option<&str>) {
        if !acc.text.is_empty()
            && let Some(separator) = separator
        {
            acc.text.push_str(separator);
        }
        acc.text.push_str(value);
    }

    /// Partial results of several partitions join with a comma: the separator of the
    /// rows is not part of the accumulator.
    fn merge(acc: &mut Joined, other: &Joined) {
        if !acc.text.is_empty() && !other.text.is_empty() {
            acc.text.push(',');
        }
        acc.text.push_str(&other.text);
    }

    fn get_value(acc: &Joined) -> String {
        acc.text.clone()
    }
}
