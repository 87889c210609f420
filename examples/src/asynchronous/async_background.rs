//! `AsyncBackgroundFunction` from "Asynchronous Table Functions": rows produced by an
//! asynchronous call (the guide's stands in for an HTTP request).

use udf_core::prelude::*;

#[derive(Clone, Debug, Default)]
pub struct AsyncBackgroundFunction;

#[async_table_function]
impl AsyncBackgroundFunction {
    #[data_type("ROW<user STRING, tour STRING>")]
    async fn eval(&self, user_id: &str) -> Vec<Row> {
        vec![Row::of([Value::from(user_id), Value::from("tour")])]
    }
}
