//! DataFrame methods for what DataFusion has no operator for, the way Flink's Table API
//! writes them: table functions (`joinLateral`, `leftOuterJoinLateral`) and table aggregates
//! (`groupBy(..).flatAggregate(..)`, or `flatAggregate(..)` over the whole table).

use datafusion::common::Result;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan};
use datafusion::prelude::DataFrame;
use std::sync::Arc;

use crate::sql::lateral::{LateralJoin, LateralNode, TableFunctionCall};
use crate::sql::table_aggregate::{TableAggregateCall, TableAggregateNode};

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

/// Table aggregates on a DataFrame.
pub trait FlatAggregate: Sized {
    /// Groups the rows by `keys`, for [`GroupedDataFrame::flat_aggregate`].
    fn group_by(self, keys: Vec<Expr>) -> GroupedDataFrame;

    /// Applies a table aggregate to all rows as one group: the result has the emitted row's
    /// columns (renamed with [`TableAggregateCall::alias`]), then `op` when the call asks
    /// for a changelog.
    fn flat_aggregate(self, call: TableAggregateCall) -> Result<DataFrame>;
}

impl FlatAggregate for DataFrame {
    fn group_by(self, keys: Vec<Expr>) -> GroupedDataFrame {
        GroupedDataFrame { input: self, keys }
    }

    fn flat_aggregate(self, call: TableAggregateCall) -> Result<DataFrame> {
        self.group_by(Vec::new()).flat_aggregate(call)
    }
}

/// A DataFrame grouped by key expressions.
#[derive(Debug, Clone)]
pub struct GroupedDataFrame {
    input: DataFrame,
    keys: Vec<Expr>,
}

impl GroupedDataFrame {
    /// Applies a table aggregate per group: the result has the keys, then the emitted row's
    /// columns (renamed with [`TableAggregateCall::alias`]), then `op` when the call asks
    /// for a changelog.
    pub fn flat_aggregate(self, call: TableAggregateCall) -> Result<DataFrame> {
        let (state, plan) = self.input.into_parts();
        let node = TableAggregateNode::try_new(plan, self.keys, call)?;
        let plan = LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        });
        Ok(DataFrame::new(state, plan))
    }
}
