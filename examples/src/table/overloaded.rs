//! The two table-function `OverloadedFunction`s from "@FunctionHint": overloads sharing one
//! declared row type, and overloads whose types come entirely from hints.

use udf_core::prelude::*;

/// Overloaded evaluation methods with one row type, `ROW<s STRING, i INT>`.
#[derive(Clone, Debug, Default)]
pub struct OverloadedFunction;

#[table_function]
impl OverloadedFunction {
    #[data_type("ROW<s STRING, i INT>")]
    fn eval(&self, a: i32, b: i32, out: &mut Collector<Row>) {
        out.collect(Row::of([Value::from("Sum"), Value::Int(a.wrapping_add(b))]));
    }

    /// Overloading the arguments is still possible.
    #[data_type("ROW<s STRING, i INT>")]
    fn eval_empty(&self, out: &mut Collector<Row>) {
        out.collect(Row::of([Value::from("Empty args"), Value::Int(-1)]));
    }
}

/// Types given per overload: `(INT, INT) -> INT`, `(BIGINT, BIGINT) -> BIGINT`,
/// `() -> BOOLEAN`. The Java version emits its first argument (or `false` without one).
#[derive(Clone, Debug, Default)]
pub struct HintedOverloadedFunction;

#[table_function]
impl HintedOverloadedFunction {
    fn eval_int(&self, a: i32, b: i32, out: &mut Collector<i32>) {
        let _ = b;
        out.collect(a);
    }

    fn eval_bigint(&self, a: i64, b: i64, out: &mut Collector<i64>) {
        let _ = b;
        out.collect(a);
    }

    fn eval_empty(&self, out: &mut Collector<bool>) {
        out.collect(false);
    }
}
