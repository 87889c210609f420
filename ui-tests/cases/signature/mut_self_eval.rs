use udf_core::prelude::*;

#[derive(Clone)]
struct Counter {
    n: i64,
}

#[scalar_function]
impl Counter {
    fn eval(&mut self, a: i64) -> i64 {
        self.n += a;
        self.n
    }
}

fn main() {}
