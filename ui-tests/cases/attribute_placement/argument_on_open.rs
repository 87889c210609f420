use udf_core::prelude::*;

#[derive(Clone, Default)]
struct Shout;

#[scalar_function]
impl Shout {
    #[argument(name = "context")]
    fn open(&mut self, _context: &FunctionContext) {}

    fn eval(&self, s: &str) -> String {
        s.to_uppercase()
    }
}

fn main() {}
