//! Where a call's time column gets its watermark: a column read unchanged from a table —
//! through projections, renames, subquery aliases, filters, sorts, limits and views —
//! keeps that table's declared watermark, as a Flink time attribute does; a computed
//! column has none.

use std::any::Any;

use datafusion::catalog::default_table_source::source_as_provider;
use datafusion::catalog::view::ViewTable;
use datafusion::logical_expr::{Expr, LogicalPlan};

use super::event_time::{WatermarkSpec, Watermarks};

/// The tables column `index` of `plan` is read from, outermost first (a view or subquery
/// alias, then the tables below it), each with the column's name there and its watermark
/// if one is declared.
pub fn sources(plan: &LogicalPlan, index: usize, watermarks: &Watermarks) -> Vec<Source> {
    let mut found = Vec::new();
    trace(plan, index, watermarks, &mut found);
    found
}

/// A table a time column is read from.
pub struct Source {
    pub table: String,
    pub column: String,
    pub watermark: Option<WatermarkSpec>,
}

fn trace(plan: &LogicalPlan, index: usize, watermarks: &Watermarks, found: &mut Vec<Source>) {
    // The column's table here (a scan, or a view or subquery by its alias).
    if let (Some(qualifier), field) = plan.schema().qualified_field(index) {
        let (table, column) = (qualifier.table(), field.name());
        let seen = found
            .last()
            .is_some_and(|s| s.table == table && s.column == *column);
        if !seen {
            found.push(Source {
                watermark: watermarks.of(table, column),
                table: table.to_owned(),
                column: column.clone(),
            });
        }
    }
    match plan {
        LogicalPlan::TableScan(scan) => {
            // A view's column comes from the tables of its query.
            let Ok(provider) = source_as_provider(&scan.source) else {
                return;
            };
            let provider: &dyn Any = provider.as_ref();
            if let Some(view) = provider.downcast_ref::<ViewTable>() {
                let inner = scan.projection.as_ref().map_or(index, |p| p[index]);
                trace(view.logical_plan(), inner, watermarks, found);
            }
        }
        LogicalPlan::Projection(projection) => {
            if let Expr::Column(column) = projection.expr[index].clone().unalias_nested().data
                && let Ok(inner) = projection.input.schema().index_of_column(&column)
            {
                trace(&projection.input, inner, watermarks, found);
            }
        }
        LogicalPlan::SubqueryAlias(alias) => trace(&alias.input, index, watermarks, found),
        LogicalPlan::Filter(filter) => trace(&filter.input, index, watermarks, found),
        LogicalPlan::Sort(sort) => trace(&sort.input, index, watermarks, found),
        LogicalPlan::Limit(limit) => trace(&limit.input, index, watermarks, found),
        LogicalPlan::Repartition(repartition) => {
            trace(&repartition.input, index, watermarks, found)
        }
        _ => {}
    }
}
