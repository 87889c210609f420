use udf_core::prelude::*;

#[derive(Clone)]
struct Twice;

#[scalar_function]
impl Twice {
    fn eval(&self, a: i32) -> i32 {
        self.double(a)
    }

    #[data_type("INT")]
    fn double(&self, a: i32) -> i32 {
        a * 2
    }
}

fn main() {}
