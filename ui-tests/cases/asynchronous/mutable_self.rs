use udf_core::prelude::*;

#[derive(Clone)]
struct Lookup {
    calls: usize,
}

#[async_scalar_function]
impl Lookup {
    async fn eval(&mut self, id: i32) -> i32 {
        self.calls += 1;
        id
    }
}

fn main() {}
