//! `SumFunction`: overloaded evaluation methods, one of them with varargs.

use udf_core::prelude::*;

#[derive(Clone, Debug, Default)]
pub struct SumFunction;

#[scalar_function]
impl SumFunction {
    fn eval(&self, a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }

    /// `Integer.valueOf(a) + Integer.valueOf(b)`: a string that is no integer is an error.
    fn eval_strings(&self, a: &str, b: &str) -> Result<i32> {
        Ok(a.trim()
            .parse::<i32>()?
            .wrapping_add(b.trim().parse::<i32>()?))
    }

    /// The sum of the doubles, truncated to an integer.
    #[varargs]
    fn eval_doubles(&self, d: &[f64]) -> i32 {
        d.iter().sum::<f64>() as i32
    }
}
