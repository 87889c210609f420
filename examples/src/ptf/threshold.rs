//! `ThresholdFunction` from "Arguments": emits the `amount` of rows at or above a threshold.

use udf_core::prelude::*;

#[ptf(name = "ThresholdFunction")]
pub fn threshold_function(
    #[argument(set_semantic_table, name = "input_table")] t: Row,
    #[argument(name = "threshold")] threshold: i32,
    out: &mut Collector<i32>,
) -> Result<()> {
    let Some(amount) = t.field("amount").and_then(Value::as_i32) else {
        bail!("the table needs an INT column `amount` without NULLs");
    };
    if amount >= threshold {
        out.collect(amount);
    }
    Ok(())
}
