use udf_core::prelude::*;

#[derive(Clone)]
struct Words;

#[table_function]
impl Words {
    fn split(&self, s: &str, out: &mut Collector<String>) {
        out.collect(s.to_owned());
    }
}

fn main() {}
