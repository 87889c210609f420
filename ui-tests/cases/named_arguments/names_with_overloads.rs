use udf_core::prelude::*;

#[derive(Clone)]
struct Sum;

#[scalar_function]
impl Sum {
    fn eval(&self, #[argument(name = "left")] a: i32, b: i32) -> i32 {
        a + b
    }

    fn eval_text(&self, a: &str, b: &str) -> String {
        format!("{a}{b}")
    }
}

fn main() {}
