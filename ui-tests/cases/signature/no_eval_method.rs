use udf_core::prelude::*;

#[derive(Clone)]
struct Nothing;

#[scalar_function]
impl Nothing {
    fn evaluate(&self, a: i32) -> i32 {
        a
    }
}

fn main() {}
