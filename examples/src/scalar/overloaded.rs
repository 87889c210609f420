//! `OverloadedFunction` from "@DataTypeHint": hints fix a decimal's precision, a nested
//! ROW result, and an opaque RAW result computed from an argument of any type.

use chrono::DateTime;
use udf_core::prelude::*;

#[derive(Clone, Debug, Default)]
pub struct OverloadedFunction;

#[scalar_function]
impl OverloadedFunction {
    /// No hint required.
    fn eval(&self, a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }

    /// The precision and scale of the decimal result come from the hint.
    #[data_type("DECIMAL(12, 3)")]
    fn eval_decimal(&self, a: f64, b: f64) -> Result<Decimal> {
        Decimal::from_f64(a + b)
    }

    /// A nested result type.
    #[data_type("ROW<s STRING, t TIMESTAMP_LTZ(3)>")]
    fn eval_row(&self, i: i32) -> Result<Row> {
        let instant = DateTime::from_timestamp(i as i64, 0)
            .ok_or_else(|| Error::msg(format!("{i} s is out of range")))?;
        Ok(Row::of([
            Value::from(i.to_string()),
            Value::TimestampLtz(instant),
        ]))
    }

    /// Any input, serialized into an opaque RAW value (here: its text, as UTF-8 bytes).
    #[data_type("RAW")]
    fn eval_any(&self, o: Value) -> Vec<u8> {
        o.to_string().into_bytes()
    }
}
