//! Table aggregates on a DataFrame, as Flink's Table API writes them:
//! `groupBy(..).flatAggregate(..)`, or `flatAggregate(..)` over the whole table.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan};
use datafusion::prelude::DataFrame;

use super::node::{TableAggregateCall, TableAggregateNode};

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
