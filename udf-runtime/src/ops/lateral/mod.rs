//! Table functions joined to the rows that call them (Flink's correlate):
//!
//! ```sql
//! SELECT a, word FROM t, LATERAL TABLE(split(t.s))
//! SELECT a, word FROM t JOIN LATERAL TABLE(split(t.s)) AS w(word) ON TRUE
//! SELECT a, word FROM t LEFT JOIN LATERAL TABLE(split(t.s)) AS w(word) ON TRUE
//! SELECT * FROM TABLE(generate_series(1, 10))
//! ```
//!
//! DataFusion cannot call a table function once per input row, so the call is planned as a
//! [`LateralNode`] over a one-row input (`binding.rs`); when it sits on the right of a
//! join, the call reads the left side's columns as outer references, and an analyzer rule
//! (`analyzer.rs`) moves the node on top of the left side. The DataFrame API builds the node
//! directly (`dataframe.rs`: `join_lateral`, `left_outer_join_lateral`). [`LateralExec`] runs it.

mod analyzer;
pub mod binding;
mod call;
mod correlate;
mod dataframe;
mod exec;
mod instance;
mod node;

pub use analyzer::LateralJoins;
pub use binding::TableFunctionPlanner;
pub use call::TableFunctionCall;
pub(crate) use call::{ResolvedCall, TableFunctionImpl};
pub use dataframe::JoinLateral;
pub use exec::LateralExec;
pub(crate) use node::LateralJoin;
pub use node::LateralNode;
