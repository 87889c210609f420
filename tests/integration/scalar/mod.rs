//! Scalar functions in SQL and DataFrames: SEMANTICS rules 1–7, the catalog, type mappings.

mod catalog;
mod dataframe;
mod errors;
mod folding;
mod lifecycle;
mod named_arguments;
mod overloads;
mod plans;
mod types;
