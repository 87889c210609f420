use udf_core::prelude::*;

#[scalar_function]
fn greet(name: &str, #[argument(optional)] greeting: &str) -> String {
    format!("{greeting}, {name}")
}

fn main() {}
