use udf_core::prelude::*;

#[derive(Default)]
struct Scaled {
    factor: i32,
}

#[scalar_function]
impl Scaled {
    fn open(&mut self, context: &FunctionContext) -> Result<()> {
        self.factor = context.get_job_parameter("factor", "2").parse()?;
        Ok(())
    }

    fn eval(&self, a: i32) -> i32 {
        a * self.factor
    }
}

fn main() {}
