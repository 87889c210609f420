use udf_core::prelude::*;

#[scalar_function]
#[varargs]
fn join(#[argument(optional)] separator: Option<&str>, parts: &[&str]) -> String {
    parts.join(separator.unwrap_or(","))
}

fn main() {}
