//! `StringHashFunction` from the API digest: two overloads with and without a prefix.

use udf_core::prelude::*;

use crate::java;

#[derive(Clone, Debug, Default)]
pub struct StringHashFunction;

#[scalar_function(name = "string_hash")]
impl StringHashFunction {
    fn eval(&self, input: &str) -> String {
        format!("hash_{}", java::string_hash(input).wrapping_abs())
    }

    fn eval_prefixed(&self, input: &str, prefix: &str) -> String {
        format!("{prefix}_{}", java::string_hash(input).wrapping_abs())
    }
}
