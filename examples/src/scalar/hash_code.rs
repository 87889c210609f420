//! `HashCodeFunction` from "Runtime Integration": reads a global job parameter in `open`.

use udf_core::prelude::*;

use crate::java;

/// `s.hashCode() * factor`, with `factor` from the job parameter `hashcode_factor` (default 12).
#[derive(Clone, Debug, Default)]
pub struct HashCodeFunction {
    factor: i32,
}

#[scalar_function(name = "hashCode")]
impl HashCodeFunction {
    fn open(&mut self, context: &FunctionContext) -> Result<()> {
        self.factor = context.get_job_parameter("hashcode_factor", "12").parse()?;
        Ok(())
    }

    fn eval(&self, s: &str) -> i32 {
        java::string_hash(s).wrapping_mul(self.factor)
    }
}
