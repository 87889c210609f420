//! `GenerateSeriesFunction` from the API digest: the integers from `start` to `end`, by
//! `step` (1 when left out), as one column `f0`.

use udf_core::prelude::*;

#[derive(Clone, Debug, Default)]
pub struct GenerateSeriesFunction;

#[table_function(name = "generate_series_function")]
impl GenerateSeriesFunction {
    /// NULL bounds emit nothing.
    fn eval(&self, start: i32, end: i32, out: &mut Collector<i32>) {
        for i in start..=end {
            out.collect(i);
        }
    }

    /// A step of 0 (or NULL) emits nothing; a negative step counts down.
    fn eval_step(&self, start: i32, end: i32, step: i32, out: &mut Collector<i32>) {
        let mut i = start as i64;
        let (end, step) = (end as i64, step as i64);
        while (step > 0 && i <= end) || (step < 0 && i >= end) {
            out.collect(i as i32);
            i += step;
        }
    }
}
