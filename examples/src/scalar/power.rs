//! `PowerFunction` from the API digest: the same function for DOUBLE and BIGINT.

use udf_core::prelude::*;

#[derive(Clone, Debug, Default)]
pub struct PowerFunction;

#[scalar_function(name = "power_func")]
impl PowerFunction {
    fn eval(&self, base: f64, exponent: f64) -> f64 {
        base.powf(exponent)
    }

    /// `(long) Math.pow(base, exponent)`: computed in floating point, then saturated.
    fn eval_long(&self, base: i64, exponent: i64) -> i64 {
        (base as f64).powf(exponent as f64) as i64
    }
}
