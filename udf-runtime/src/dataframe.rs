//! DataFrame methods for what DataFusion has no operator for.

use datafusion::common::Result;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan};
use datafusion::prelude::DataFrame;
use std::sync::Arc;

use crate::sql::table_aggregate::{TableAggregateCall, TableAggregateNode};

/// `flat_aggregate` on a DataFrame (Flink's `groupBy(..).flatAggregate(..)`).
pub trait FlatAggregate: Sized {
    /// Applies a table aggregate per group of `group_by` (all rows when empty). The result
    /// has the keys, then the emitted row's columns (renamed with
    /// [`TableAggregateCall::alias`]), then `op` when the call asks for a changelog.
    fn flat_aggregate(self, group_by: Vec<Expr>, call: TableAggregateCall) -> Result<DataFrame>;
}

impl FlatAggregate for DataFrame {
    fn flat_aggregate(self, group_by: Vec<Expr>, call: TableAggregateCall) -> Result<DataFrame> {
        let (state, plan) = self.into_parts();
        let node = TableAggregateNode::try_new(plan, group_by, call)?;
        let plan = LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        });
        Ok(DataFrame::new(state, plan))
    }
}
