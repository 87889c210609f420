//! Which relations of a plan are changelogs, and what may read them (Flink's changelog
//! modes). An analyzer rule, run after DataFusion's, bottom up:
//!
//! - a GROUP BY `window_start, window_end, ...` over a window table function becomes a window
//!   aggregate (insert-only: each window's rows once);
//! - any other GROUP BY over a stream (a fed table or another unbounded table) or over a
//!   changelog becomes the updating aggregate, whose output is a changelog;
//! - a projection over a changelog keeps its row-kind column (appended when not selected);
//! - an OVER window over a stream, ordered by a time attribute, becomes a row-time OVER
//!   (each row once the watermark passes it);
//! - a table aggregate over a stream emits a changelog, as Flink's do;
//! - filters and aliases pass a changelog through unchanged, as Flink filters each row,
//!   `INSERT INTO` a table with an `op` column writes the kinds there (by position, or into
//!   the `op` a column list leaves out: [`super::insert_kinds`]), and a PTF whose table
//!   argument declares `supports_updates` reads each row with its kind;
//! - any other operator over a changelog is a planning error naming it: it would read `-U`
//!   and `-D` rows as if they were inserts.

use std::any::Any;
use std::sync::Arc;

use datafusion::catalog::default_table_source::source_as_provider;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, Result, plan_err};
use datafusion::config::ConfigOptions;
use datafusion::datasource::ViewTable;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, Projection};
use datafusion::optimizer::AnalyzerRule;

use super::{OP_COLUMN, insert_kinds, row_kind_column};
use crate::ops::over::EventTimeOverNode;
use crate::ops::ptf::PtfNode;
use crate::ops::table_aggregate::TableAggregateNode;
use crate::ops::table_aggregate::aggregation::EmitMode;
use crate::ops::updating_aggregate::UpdatingAggregateNode;
use crate::ops::window::WindowAggregateNode;
use crate::session::feed::FeedTable;
use crate::streaming::event_time::Watermarks;

#[derive(Debug, Default)]
pub struct ChangelogModes {
    /// Where the time attributes of OVER windows over a stream get their watermarks.
    pub watermarks: Arc<Watermarks>,
}

impl AnalyzerRule for ChangelogModes {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_down_with_subqueries(insert_kinds::mark_slot)?
            .data
            .transform_up_with_subqueries(|plan| rewrite(plan, &self.watermarks))
            .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "udf_changelog_modes"
    }
}

/// Whether `plan` is a changelog.
pub fn updating(plan: &LogicalPlan) -> bool {
    row_kind_column(plan.schema()).is_some()
}

fn rewrite(plan: LogicalPlan, watermarks: &Watermarks) -> Result<Transformed<LogicalPlan>> {
    match plan {
        LogicalPlan::Window(window) if !updating(&window.input) && streaming(&window.input) => {
            let node = EventTimeOverNode::try_new(&window, watermarks)?;
            Ok(Transformed::yes(LogicalPlan::Extension(Extension {
                node: Arc::new(node),
            })))
        }
        LogicalPlan::Aggregate(aggregate) if !updating(&aggregate.input) => {
            match WindowAggregateNode::of(&aggregate)? {
                Some(node) => Ok(Transformed::yes(LogicalPlan::Extension(Extension {
                    node: Arc::new(node),
                }))),
                None if streaming(&aggregate.input) => {
                    let node = UpdatingAggregateNode::try_new(aggregate)?;
                    Ok(Transformed::yes(LogicalPlan::Extension(Extension {
                        node: Arc::new(node),
                    })))
                }
                None => Ok(Transformed::no(LogicalPlan::Aggregate(aggregate))),
            }
        }
        LogicalPlan::Aggregate(aggregate) => {
            let node = UpdatingAggregateNode::try_new(aggregate)?;
            Ok(Transformed::yes(LogicalPlan::Extension(Extension {
                node: Arc::new(node),
            })))
        }
        LogicalPlan::Extension(extension) if final_table_aggregate_over_a_stream(&extension) => {
            let node = extension
                .node
                .as_any()
                .downcast_ref::<TableAggregateNode>()
                .expect("checked above")
                .as_changelog()?;
            Ok(Transformed::yes(LogicalPlan::Extension(Extension {
                node: Arc::new(node),
            })))
        }
        LogicalPlan::Projection(projection) if insert_kinds::has_slot(&projection) => {
            insert_kinds::fill_slot(projection).map(Transformed::yes)
        }
        LogicalPlan::Projection(projection)
            if updating(&projection.input) && !updating_output(&projection) =>
        {
            keep_row_kinds(projection).map(Transformed::yes)
        }
        plan => {
            let reads_changelog = plan.inputs().iter().any(|input| updating(input));
            if !reads_changelog {
                return Ok(Transformed::no(plan));
            }
            // Nodes that keep a schema of their own (aliases) gain the row-kind column.
            let plan = plan.recompute_schema()?;
            if !passes_changelog(&plan) {
                return plan_err!(
                    "{} cannot read a changelog (rows of kinds +I, -U, +U, -D from {}): it would take `-U` and `-D` rows for inserts; only projections, filters and GROUP BY read a changelog so far",
                    describe(&plan),
                    origin(&plan)
                );
            }
            Ok(Transformed::yes(plan))
        }
    }
}

/// A table aggregate asked for final results of an unbounded input.
fn final_table_aggregate_over_a_stream(extension: &Extension) -> bool {
    extension
        .node
        .as_any()
        .downcast_ref::<TableAggregateNode>()
        .is_some_and(|node| node.call.mode == EmitMode::Final && streaming(&node.input))
}

fn updating_output(projection: &Projection) -> bool {
    row_kind_column(&projection.schema).is_some()
}

/// The projection with the input's row-kind column appended.
fn keep_row_kinds(projection: Projection) -> Result<LogicalPlan> {
    let schema = projection.input.schema();
    if projection
        .schema
        .fields()
        .iter()
        .any(|f| f.name() == OP_COLUMN)
    {
        return plan_err!(
            "a query over a changelog selects a column named `{OP_COLUMN}`, the name of the changelog's row-kind column; rename it"
        );
    }
    let index = row_kind_column(schema).expect("the input is a changelog");
    let mut exprs = projection.expr;
    exprs.push(Expr::Column(Column::from(schema.qualified_field(index))));
    Ok(LogicalPlan::Projection(Projection::try_new(
        exprs,
        projection.input,
    )?))
}

/// Operators that read a changelog row by row, keeping each row's kind.
fn passes_changelog(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Filter(_)
        | LogicalPlan::SubqueryAlias(_)
        | LogicalPlan::Projection(_)
        | LogicalPlan::Explain(_)
        | LogicalPlan::Analyze(_) => true,
        LogicalPlan::Extension(extension) => {
            let node = extension.node.as_any();
            if let Some(ptf) = node.downcast_ref::<PtfNode>() {
                // A PTF reads a changelog where its binding found one (`supports_updates`).
                return ptf.inputs.iter().enumerate().all(|(index, input)| {
                    !updating(input)
                        || ptf
                            .call
                            .tables
                            .get(index)
                            .is_some_and(|t| t.kinds.is_some())
                });
            }
            node.is::<UpdatingAggregateNode>()
        }
        // A table with a column `op` takes a changelog as rows with their kinds.
        LogicalPlan::Dml(dml) => dml
            .target
            .schema()
            .fields()
            .iter()
            .any(|f| f.name() == OP_COLUMN),
        _ => false,
    }
}

/// The operator, as an error names it.
fn describe(plan: &LogicalPlan) -> String {
    match plan {
        LogicalPlan::Dml(dml) => format!("`INSERT INTO {}`", dml.table_name),
        other => format!("`{}`", other.display()),
    }
}

/// Where the changelog an operator reads comes from.
fn origin(plan: &LogicalPlan) -> String {
    let mut found = None;
    let _ = plan.apply(|node| {
        let changelog_inputs = node.inputs().iter().any(|i| updating(i));
        if updating(node) && !changelog_inputs {
            found = Some(match node {
                LogicalPlan::TableScan(scan) => format!("table `{}`", scan.table_name),
                LogicalPlan::Extension(extension)
                    if extension.node.as_any().is::<UpdatingAggregateNode>() =>
                {
                    "a GROUP BY over a stream".to_owned()
                }
                other => format!("`{}`", other.display()),
            });
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found.unwrap_or_else(|| "its input".to_owned())
}

/// Whether `plan` reads a stream: a fed table, an unbounded streaming table, or a view of
/// one. (A `StreamingTable` does not say whether it ends; it counts as a stream.)
pub fn streaming(plan: &LogicalPlan) -> bool {
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node
            && let Ok(provider) = source_as_provider(&scan.source)
        {
            let provider: &dyn Any = provider.as_ref();
            found = provider.is::<FeedTable>()
                || provider.is::<StreamingTable>()
                || provider
                    .downcast_ref::<ViewTable>()
                    .is_some_and(|view| streaming(view.logical_plan()));
            if found {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}
