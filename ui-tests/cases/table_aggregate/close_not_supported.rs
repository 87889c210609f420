use udf_core::prelude::*;

#[derive(Clone)]
struct Largest;

#[table_aggregate_function]
impl Largest {
    fn accumulate(acc: &mut i64, value: i64) {
        *acc = (*acc).max(value);
    }

    fn emit_value(acc: &i64, out: &mut Collector<i64>) {
        out.collect(*acc);
    }

    fn close(&mut self) -> Result<()> {
        Ok(())
    }
}

fn main() {}
