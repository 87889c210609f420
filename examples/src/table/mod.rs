//! Table functions from the "User-defined Functions" guide and the API digest.

pub mod generate_series;
pub mod overloaded;
pub mod split;
pub mod split_string;
