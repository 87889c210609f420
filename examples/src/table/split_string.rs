//! `SplitFunction` from the API digest (registered as `split_string`): splits at a
//! separator, emitting each trimmed piece with its position as `(f0, f1)`.

use udf_core::prelude::*;

use super::split::java_split;

#[derive(Clone, Debug, Default)]
pub struct SplitStringFunction;

#[table_function(name = "split_string")]
impl SplitStringFunction {
    /// A NULL string or separator emits nothing (the parameters are not `Option`).
    #[data_type("ROW<f0 STRING NOT NULL, f1 INT NOT NULL>")]
    fn eval(&self, s: &str, separator: &str, out: &mut Collector<Row>) -> Result<()> {
        let mut separator_chars = separator.chars();
        let (Some(separator), None) = (separator_chars.next(), separator_chars.next()) else {
            bail!("the separator must be one character, not {separator:?}");
        };
        for (position, piece) in java_split(s, separator).enumerate() {
            out.collect(Row::of([
                Value::from(piece.trim()),
                Value::Int(position as i32),
            ]));
        }
        Ok(())
    }
}
