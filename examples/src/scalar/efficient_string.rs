//! `EfficientStringFunction` from "Best Practices": no intermediate strings — the result is
//! written straight into the output column.

use std::fmt::Write;

use udf_core::prelude::*;

#[derive(Clone, Debug, Default)]
pub struct EfficientStringFunction;

#[scalar_function(name = "efficient_string")]
impl EfficientStringFunction {
    fn eval(&self, input: &str, out: &mut String) {
        if !input.is_empty() {
            out.push_str("processed_");
            out.push_str(input);
        }
    }

    fn eval_int(&self, input: i32, out: &mut String) {
        // Writing into a String cannot fail.
        let _ = write!(out, "processed_{input}");
    }
}
