use udf_core::prelude::*;

#[derive(Clone, Default)]
struct Scaled {
    factor: i32,
}

#[scalar_function]
impl Scaled {
    fn open(&self) {}

    fn eval(&self, a: i32) -> i32 {
        a * self.factor
    }
}

fn main() {}
