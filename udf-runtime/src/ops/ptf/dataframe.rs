//! Process table functions on a DataFrame, as Flink's Table API writes them:
//! `table.partitionBy($("k")).process(...)`, or `table.process(...)` without partitioning.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::logical_expr::Expr;
use datafusion::prelude::DataFrame;

use crate::streaming::event_time::Watermarks;

/// A call of a process table function for [`Process::process`]: its scalar arguments, by
/// position or by name, an optional `uid` and an optional `on_time` column.
#[derive(Clone)]
pub struct ProcessTableCall {
    pub(crate) name: String,
    pub(crate) spec: Arc<udf_core::FunctionSpec>,
    pub(crate) function: Arc<dyn udf_core::ptf::ProcessTableFunction>,
    pub(crate) metrics: udf_core::Metrics,
    pub(crate) watermarks: Arc<Watermarks>,
    pub(crate) positional: Vec<Expr>,
    pub(crate) named: Vec<(String, Expr)>,
    pub(crate) uid: Option<String>,
    pub(crate) on_time: Option<String>,
    /// Further table arguments, by name.
    pub(crate) tables: Vec<(String, PartitionedDataFrame)>,
}

impl std::fmt::Debug for ProcessTableCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessTableCall")
            .field("name", &self.name)
            .field("positional", &self.positional)
            .field("named", &self.named)
            .finish_non_exhaustive()
    }
}

impl ProcessTableCall {
    /// Passes scalar argument `name` (a constant expression).
    pub fn arg(mut self, name: &str, value: impl Into<Expr>) -> Self {
        self.named.push((name.to_owned(), value.into()));
        self
    }

    /// Names the call's state (Flink's `uid` argument).
    pub fn uid(mut self, uid: &str) -> Self {
        self.uid = Some(uid.to_owned());
        self
    }

    /// The table's time column (Flink's `on_time => DESCRIPTOR(column)`): its watermark
    /// drives the function's timers. With several tables, each has a column of this name.
    pub fn on_time(mut self, column: &str) -> Self {
        self.on_time = Some(column.to_owned());
        self
    }

    /// Passes table argument `name`: `frame` partitioned (`frame.partition_by(keys)`) for
    /// set semantics. The DataFrame `process` is called on is the first table argument not
    /// passed by name.
    pub fn table(mut self, name: &str, frame: impl Into<PartitionedDataFrame>) -> Self {
        self.tables.push((name.to_owned(), frame.into()));
        self
    }
}

/// Process table functions on a DataFrame, as Flink's Table API writes them:
/// `table.partitionBy($("k")).process(...)`, or `table.process(...)` for row semantics.
pub trait Process: Sized {
    /// Partitions the rows by `keys` (columns), for [`PartitionedDataFrame::process`].
    fn partition_by(self, keys: Vec<Expr>) -> PartitionedDataFrame;

    /// Passes the DataFrame unpartitioned as the function's table argument (row semantics,
    /// or set semantics declared `optional_partition_by`).
    fn process(self, call: ProcessTableCall) -> Result<DataFrame>;
}

impl Process for DataFrame {
    fn partition_by(self, keys: Vec<Expr>) -> PartitionedDataFrame {
        PartitionedDataFrame { input: self, keys }
    }

    fn process(self, call: ProcessTableCall) -> Result<DataFrame> {
        self.partition_by(Vec::new()).process(call)
    }
}

/// A DataFrame partitioned by key columns.
#[derive(Debug, Clone)]
pub struct PartitionedDataFrame {
    input: DataFrame,
    keys: Vec<Expr>,
}

/// A DataFrame passed unpartitioned.
impl From<DataFrame> for PartitionedDataFrame {
    fn from(input: DataFrame) -> Self {
        input.partition_by(Vec::new())
    }
}

impl PartitionedDataFrame {
    /// Passes the partitioned rows as the function's (first) table argument: the result
    /// has the keys (or every column, when passed through), then the function's columns.
    pub fn process(self, call: ProcessTableCall) -> Result<DataFrame> {
        let (state, plan) = self.input.into_parts();
        let mut inputs = vec![(None, normalized(plan.clone(), self.keys)?)];
        for (name, frame) in call.tables {
            let (_, other) = frame.input.into_parts();
            inputs.push((Some(name), normalized(other, frame.keys)?));
        }
        let inputs = inputs
            .into_iter()
            .map(|(name, (plan, keys))| (name, plan, keys))
            .collect();
        let plan = super::binding::PtfArguments {
            name: &call.name,
            spec: &call.spec,
            function: &call.function,
            watermarks: &call.watermarks,
            metrics: &call.metrics,
        }
        .bind_dataframe(inputs, call.positional, call.named, call.uid, call.on_time)?;
        Ok(DataFrame::new(state, plan))
    }
}

/// `plan` with its key expressions resolved against it.
fn normalized(
    plan: datafusion::logical_expr::LogicalPlan,
    keys: Vec<Expr>,
) -> Result<(datafusion::logical_expr::LogicalPlan, Vec<Expr>)> {
    let keys = keys
        .into_iter()
        .map(|key| datafusion::logical_expr::expr_rewriter::normalize_col(key, &plan))
        .collect::<Result<Vec<_>>>()?;
    Ok((plan, keys))
}
