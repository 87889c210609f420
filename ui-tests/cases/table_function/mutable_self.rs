use udf_core::prelude::*;

#[derive(Clone)]
struct Words {
    seen: usize,
}

#[table_function]
impl Words {
    fn eval(&mut self, s: &str, out: &mut Collector<String>) {
        self.seen += 1;
        out.collect(s.to_owned());
    }
}

fn main() {}
