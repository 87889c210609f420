//! `ComplexReturnFunction` from the API digest: splits `"a:1:2.5"` into a ROW.

use udf_core::prelude::*;

/// The result: named fields instead of Flink's positional `Types.ROW(STRING, INT, DOUBLE)`.
#[derive(Clone, Debug, PartialEq, SqlRow)]
pub struct Parts {
    pub name: String,
    pub count: i32,
    pub ratio: f64,
}

/// `"name:count:ratio"` → `ROW<name STRING, count INT, ratio DOUBLE>`; malformed input is an error.
#[scalar_function]
pub fn complex_return(input: &str) -> Result<Parts> {
    let mut parts = input.split(':');
    let (Some(name), Some(count), Some(ratio)) = (parts.next(), parts.next(), parts.next()) else {
        bail!("expected `name:count:ratio`, got `{input}`");
    };
    Ok(Parts {
        name: name.to_owned(),
        count: count.parse()?,
        ratio: ratio.parse()?,
    })
}
