//! Flink's SQL logical types for the UDF framework.
//!
//! One model serves two sides: `udf-macros` parses `#[data_type("...")]` hints with it at
//! compile time, and `udf-core` uses it (with the `arrow` feature) to describe and convert
//! values at run time.

mod duration;
mod model;
mod parse;
mod print;

#[cfg(feature = "arrow")]
mod arrow;

pub use duration::{format_duration, parse_duration};
pub use model::*;
pub use parse::{ParseError, parse};

#[cfg(feature = "arrow")]
pub use arrow::{LTZ_TIME_ZONE, UnsupportedArrowType, time_unit};

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;
