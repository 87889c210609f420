//! `NamedParameterClass` from "Named Parameters": named, typed arguments, the second optional.
//! (Flink shows three ways to attach the `@ArgumentHint`s; in Rust they sit on the parameters.)

use udf_core::prelude::*;

#[derive(Clone, Debug, Default)]
pub struct NamedParameterClass;

#[scalar_function]
impl NamedParameterClass {
    fn eval(
        &self,
        #[argument(name = "param1", type = "STRING")] s1: &str,
        #[argument(name = "param2", optional, type = "INT")] s2: Option<i32>,
    ) -> String {
        match s2 {
            Some(v) => format!("{s1}, {v}"),
            None => format!("{s1}, null"),
        }
    }
}
