use udf_core::prelude::*;

#[derive(Clone)]
struct Total;

#[aggregate_function]
impl Total {
    fn open(&mut self, context: &FunctionContext) -> Result<()> {
        let _ = context;
        Ok(())
    }

    fn accumulate(acc: &mut i64, value: i64) {
        *acc += value;
    }

    fn get_value(acc: &i64) -> i64 {
        *acc
    }
}

fn main() {}
