//! `LiteralFunction` from "Custom Type Inference": the result type is chosen by a string
//! literal argument.

use udf_core::prelude::*;

#[derive(Clone, Debug, Default)]
pub struct LiteralFunction;

#[scalar_function]
impl LiteralFunction {
    /// Parses `s` as the type named by `ty`.
    fn eval(&self, s: &str, ty: &str) -> Result<Value> {
        Ok(match ty {
            "INT" => Value::Int(s.trim().parse()?),
            "DOUBLE" => Value::Double(s.trim().parse()?),
            _ => Value::String(s.to_owned()),
        })
    }

    /// Replaces automatic inference: INT NOT NULL, DOUBLE NOT NULL or STRING, from the literal.
    fn output_type(&self, call: &CallContext) -> Result<DataType> {
        if !call.is_literal(1) || call.is_null_literal(1) {
            return Err(call.validation_error("Literal expected for second argument."));
        }
        Ok(match call.literal_str(1).unwrap_or("STRING") {
            "INT" => DataType::int().not_null(),
            "DOUBLE" => DataType::double().not_null(),
            _ => DataType::string(),
        })
    }
}
