use udf_core::prelude::*;

#[derive(SqlRow)]
enum Shape {
    Circle,
    Square,
}

fn main() {}
