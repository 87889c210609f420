use udf_core::prelude::*;

#[scalar_function]
#[data_type("INT")]
fn f(a: &str, out: &mut String) {
    out.push_str(a);
}

fn main() {}
