//! Scalar functions in SQL and DataFrames: rules 1–7 of docs/semantics.md, the catalog, type mappings.

mod catalog;
mod dataframe;
mod errors;
mod folding;
mod lifecycle;
mod named_arguments;
mod overloads;
mod plans;
mod types;
