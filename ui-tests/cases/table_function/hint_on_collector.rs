use udf_core::prelude::*;

#[table_function]
fn words(s: &str, #[data_type("ROW<w STRING>")] out: &mut Collector<Row>) {
    out.collect(Row::of([Value::from(s)]));
}

fn main() {}
