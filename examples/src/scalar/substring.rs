//! `SubstringFunction` from the overview of the guide, plain and parameterized.

use udf_core::prelude::*;

/// The characters of `s` from `begin` (inclusive) to `end` (exclusive), like Java's
/// `String.substring`; indexes count characters. Out-of-range indexes are an error.
///
/// (`substring` itself is SQL syntax, so the SQL name is the one the guide registers.)
#[scalar_function(name = "SubstringFunction")]
pub fn substring(s: &str, begin: i32, end: i32) -> Result<&str> {
    char_range(s, begin, end)
}

fn char_range(s: &str, begin: i32, end: i32) -> Result<&str> {
    let chars = s.chars().count() as i64;
    if begin < 0 || end < begin || end as i64 > chars {
        bail!("begin {begin}, end {end}, length {chars}");
    }
    let byte = |index: i32| {
        s.char_indices()
            .nth(index as usize)
            .map_or(s.len(), |(i, _)| i)
    };
    Ok(&s[byte(begin)..byte(end)])
}

/// The parameterized variant: `end_inclusive` is fixed when the instance is created and
/// registered (`session.register_as("SubstringFunction", SubstringFunction { end_inclusive: true })`).
/// `Serialize` makes the field the instance's settings, which a cluster checks: executors
/// registered with another `end_inclusive` refuse the client's calls.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SubstringFunction {
    pub end_inclusive: bool,
}

#[scalar_function]
impl SubstringFunction {
    fn eval(&self, s: &str, begin: i32, end: i32) -> Result<String> {
        let end = if self.end_inclusive { end + 1 } else { end };
        char_range(s, begin, end).map(str::to_owned)
    }
}
