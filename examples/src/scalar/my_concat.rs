//! `MyConcatFunction`: varargs of any type (`InputGroup.ANY`), called with all columns.

use std::fmt::Write;

use udf_core::prelude::*;

/// Joins the text of every argument with commas; a NULL argument makes the result NULL.
#[derive(Clone, Debug, Default)]
pub struct MyConcatFunction;

#[scalar_function]
impl MyConcatFunction {
    #[varargs]
    fn eval(&self, fields: &[Value], out: &mut String) {
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            // Writing into a String cannot fail.
            let _ = write!(out, "{field}");
        }
    }
}
