use udf_core::prelude::*;

struct Point {
    x: i32,
}

#[scalar_function]
fn f(p: Point) -> i32 {
    p.x
}

fn main() {}
