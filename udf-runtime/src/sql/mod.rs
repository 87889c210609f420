//! Everything that talks to DataFusion.

pub mod aggregate_distinct;
pub mod aggregate_udf;
pub mod async_config;
pub mod async_scalar_udf;
pub mod binding;
pub mod capabilities;
pub mod config;
pub mod dialect;
pub mod extension_planner;
mod identity;
pub mod lateral;
pub mod lifecycle;
pub mod one_phase;
pub mod placement;
pub mod query_planner;
pub mod registration;
pub mod scalar_udf;
pub mod set_option;
pub mod set_semantics;
pub mod statement;
pub mod table_aggregate;
pub mod watermark_ddl;
