//! Everything that talks to DataFusion.

pub mod config;
pub mod query_planner;
pub mod scalar_udf;
pub mod statement;
