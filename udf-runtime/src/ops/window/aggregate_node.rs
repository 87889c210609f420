//! The `WindowAggregate` logical node: a GROUP BY `window_start, window_end, ...` over a
//! window table function, which emits each window's rows once, when the watermark passes
//! the window's end (insert-only). It reads the table function's input directly: keys and
//! arguments are rewritten onto the input's columns, and the windows are assigned as rows
//! arrive.

use std::cmp::Ordering;
use std::fmt;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchemaRef, Result, plan_err};
use datafusion::logical_expr::{Aggregate, Expr, LogicalPlan, UserDefinedLogicalNodeCore};

use super::spec::WindowKind;
use super::tvf_node::{WINDOW_COLUMNS, WindowTvfNode};
use crate::functions::aggregate::capabilities::ours;
use crate::ops::updating_aggregate::node::{aggregate_function, check_calls};
use crate::streaming::event_time::EventTime;

/// Where each GROUP BY column comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd)]
pub enum GroupColumn {
    WindowStart,
    WindowEnd,
    /// The key at this position of `keys`.
    Key(usize),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WindowAggregateNode {
    /// The window table function's input.
    pub(crate) input: LogicalPlan,
    pub(crate) window: WindowKind,
    pub(crate) time: EventTime,
    /// The GROUP BY keys other than the window's bounds, over `input`.
    pub(crate) keys: Vec<Expr>,
    pub(crate) layout: Vec<GroupColumn>,
    /// The aggregate calls, over `input`.
    pub(crate) calls: Vec<Expr>,
    pub(crate) schema: DFSchemaRef,
}

impl WindowAggregateNode {
    /// The node for `aggregate` when it groups a window table function by `window_start`
    /// and `window_end`; `None` for any other aggregate.
    pub fn of(aggregate: &Aggregate) -> Result<Option<Self>> {
        let Some(tvf) = window_tvf(&aggregate.input) else {
            return Ok(None);
        };
        let seen = aggregate.input.schema();
        let width = tvf.input.schema().fields().len();
        let mut layout = Vec::with_capacity(aggregate.group_expr.len());
        let mut keys = Vec::new();
        for expr in &aggregate.group_expr {
            let window_column = match expr {
                Expr::Column(column) => seen.index_of_column(column).ok().filter(|&i| i >= width),
                _ => None,
            };
            match window_column.map(|i| i - width) {
                Some(0) => layout.push(GroupColumn::WindowStart),
                Some(1) => layout.push(GroupColumn::WindowEnd),
                _ => {
                    layout.push(GroupColumn::Key(keys.len()));
                    keys.push(expr.clone());
                }
            }
        }
        let grouped = |column| layout.contains(&column);
        if !grouped(GroupColumn::WindowStart) || !grouped(GroupColumn::WindowEnd) {
            return Ok(None);
        }
        check_calls(&aggregate.aggr_expr, false)?;
        let onto_input = |expr: &Expr| onto_input(expr, seen, &tvf.input, width);
        let keys = keys.iter().map(onto_input).collect::<Result<Vec<_>>>()?;
        if let WindowKind::Session { .. } = tvf.window {
            check_merge(&aggregate.aggr_expr)?;
            if let Some(key) = tvf.partition_by.iter().find(|k| !keys.contains(k)) {
                return plan_err!(
                    "SESSION's PARTITION BY `{key}` must be a GROUP BY key too: sessions are kept per group"
                );
            }
        }
        Ok(Some(WindowAggregateNode {
            input: tvf.input.clone(),
            window: tvf.window,
            time: tvf.time.clone(),
            keys,
            layout,
            calls: aggregate
                .aggr_expr
                .iter()
                .map(onto_input)
                .collect::<Result<_>>()?,
            schema: aggregate.schema.clone(),
        }))
    }
}

/// Session windows combine the accumulators of the sessions a row joins: every project
/// aggregate needs `merge` (Flink's rule; built-ins merge).
fn check_merge(calls: &[Expr]) -> Result<()> {
    for call in calls {
        let function = aggregate_function(call)?;
        if function.params.distinct {
            return plan_err!(
                "`{call}`: DISTINCT aggregates in session windows are not supported (two sessions' distinct values may overlap when they merge)"
            );
        }
        if let Some(udaf) = ours(&function.func)
            && !udaf.spec().capabilities.merge
        {
            return plan_err!(
                "aggregate function `{}` has no `merge`, which session windows need to combine the accumulators of the sessions a row joins; implement `merge`",
                function.func.name()
            );
        }
    }
    Ok(())
}

/// The window table function under aliases, if `plan` is one.
fn window_tvf(plan: &LogicalPlan) -> Option<&WindowTvfNode> {
    match plan {
        LogicalPlan::SubqueryAlias(alias) => window_tvf(&alias.input),
        LogicalPlan::Extension(extension) => extension.node.as_any().downcast_ref(),
        _ => None,
    }
}

/// `expr` over the table function's output, rewritten onto its input (the same columns,
/// by position); the window columns are refused outside GROUP BY.
fn onto_input(
    expr: &Expr,
    seen: &datafusion::common::DFSchema,
    input: &LogicalPlan,
    width: usize,
) -> Result<Expr> {
    expr.clone()
        .transform(|expr| {
            let Expr::Column(column) = &expr else {
                return Ok(Transformed::no(expr));
            };
            let index = seen.index_of_column(column)?;
            if index >= width {
                return plan_err!(
                    "`{}` of a window table function can only be grouped by (GROUP BY window_start, window_end, ...), not used in `{expr}`",
                    WINDOW_COLUMNS[index - width]
                );
            }
            Ok(Transformed::yes(Expr::Column(Column::from(
                input.schema().qualified_field(index),
            ))))
        })
        .map(|t| t.data)
}

impl PartialOrd for WindowAggregateNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.keys.partial_cmp(&other.keys) {
            Some(Ordering::Equal) => self.calls.partial_cmp(&other.calls),
            ordering => ordering,
        }
    }
}

impl UserDefinedLogicalNodeCore for WindowAggregateNode {
    fn name(&self) -> &str {
        "WindowAggregate"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        self.keys.iter().chain(&self.calls).cloned().collect()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let keys: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        write!(
            f,
            "WindowAggregate: {} on {}, groupBy=[window_start, window_end, {}], aggr=[{}], emit=when the watermark passes the window's end",
            self.window,
            self.time.name,
            keys.join(", "),
            calls.join(", ")
        )
    }

    fn with_exprs_and_inputs(
        &self,
        exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let keys = self.keys.len();
        Ok(WindowAggregateNode {
            input: inputs.swap_remove(0),
            keys: exprs[..keys].to_vec(),
            calls: exprs[keys..].to_vec(),
            ..self.clone()
        })
    }
}
