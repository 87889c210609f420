//! Aggregate functions from the "User-defined Functions" guide and the API digest.

pub mod efficient_aggregate;
pub mod string_concat;
pub mod weighted_average;
pub mod weighted_avg;
