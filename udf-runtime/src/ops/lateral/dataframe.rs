//! Table functions on a DataFrame, as Flink's Table API writes them: `joinLateral`,
//! `leftOuterJoinLateral`.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::prelude::DataFrame;

use super::call::TableFunctionCall;
use super::node::{LateralJoin, LateralNode};

/// Table functions on a DataFrame.
pub trait JoinLateral: Sized {
    /// Joins each row to every row the table function emits for it; rows for which it emits
    /// nothing are dropped. The result has the DataFrame's columns, then the function's
    /// (renamed with [`TableFunctionCall::alias`]).
    fn join_lateral(self, call: TableFunctionCall) -> Result<DataFrame>;

    /// Like [`JoinLateral::join_lateral`], but keeps rows for which the function emits
    /// nothing, once, with NULL in the function's columns.
    fn left_outer_join_lateral(self, call: TableFunctionCall) -> Result<DataFrame>;
}

impl JoinLateral for DataFrame {
    fn join_lateral(self, call: TableFunctionCall) -> Result<DataFrame> {
        lateral(self, call, LateralJoin::Inner)
    }

    fn left_outer_join_lateral(self, call: TableFunctionCall) -> Result<DataFrame> {
        lateral(self, call, LateralJoin::Left)
    }
}

fn lateral(input: DataFrame, call: TableFunctionCall, join: LateralJoin) -> Result<DataFrame> {
    let (state, plan) = input.into_parts();
    let node = LateralNode::join(plan, call, join)?;
    let plan = LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    });
    Ok(DataFrame::new(state, plan))
}
