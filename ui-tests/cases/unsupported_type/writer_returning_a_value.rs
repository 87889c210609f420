use udf_core::prelude::*;

#[scalar_function]
fn f(a: &str, out: &mut String) -> i32 {
    out.push_str(a);
    1
}

fn main() {}
