//! From SQL text to plans: the dialect (`TABLE t PARTITION BY k` arguments), statements the
//! session handles itself (`SET`, `WATERMARK` in DDL), the preparation of parsed statements
//! (placement of row-yielding calls, named arguments, integer literals), the relation planner
//! for calls with TABLE arguments, and the query and extension planners that turn the
//! framework's logical nodes into execs.

pub mod dialect;
pub mod extension_planner;
pub mod placement;
pub mod query_planner;
pub mod relation_planner;
pub mod set_option;
pub mod statement;
pub mod table_argument;
pub mod watermark_ddl;
