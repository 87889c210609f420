//! `INSERT INTO t (a, b) SELECT ...` of a changelog into a table with an `op` column.
//!
//! DataFusion's SQL planner matches an insert's columns before the analyzer has made the
//! query a changelog, so a GROUP BY over a stream (whose row-kind column appears only then)
//! cannot fill `op` positionally: the insert names its columns and leaves `op` out, and the
//! planner fills it with NULL. Such an `op` is a *slot*: where the query turns out to be a
//! changelog it takes the row kinds, otherwise it stays NULL as SQL says.
//!
//! Only the projection that DataFusion puts under an insert is marked, so a user's own
//! `NULL AS op` keeps its meaning (and is refused over a changelog, see [`super::modes`]).

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, Result};
use datafusion::logical_expr::expr::Alias;
use datafusion::logical_expr::{
    Cast, DmlStatement, Expr, LogicalPlan, Projection, TryCast, WriteOp,
};

use super::{OP_COLUMN, row_kind_column};

/// The name a marked slot has between the two passes; no user column can be called so.
const SLOT: &str = "__udf_row_kind_slot";

/// Marks the NULL `op` of an insert's projection (the first pass, top down).
pub fn mark_slot(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Dml(dml) = plan else {
        return Ok(Transformed::no(plan));
    };
    let target_has_op = dml
        .target
        .schema()
        .fields()
        .iter()
        .any(|f| f.name() == OP_COLUMN);
    let LogicalPlan::Projection(projection) = dml.input.as_ref() else {
        return Ok(Transformed::no(LogicalPlan::Dml(dml)));
    };
    let slot = projection.expr.iter().position(is_null_op);
    let (true, WriteOp::Insert(_), Some(slot)) = (target_has_op, &dml.op, slot) else {
        return Ok(Transformed::no(LogicalPlan::Dml(dml)));
    };
    let mut expr = projection.expr.clone();
    expr[slot] = renamed(expr[slot].clone(), SLOT);
    let input = Projection::try_new(expr, Arc::clone(&projection.input))?;
    Ok(Transformed::yes(LogicalPlan::Dml(DmlStatement::new(
        dml.table_name.clone(),
        Arc::clone(&dml.target),
        dml.op.clone(),
        Arc::new(LogicalPlan::Projection(input)),
    ))))
}

/// Whether `projection` holds a marked slot.
pub fn has_slot(projection: &Projection) -> bool {
    projection.schema.fields().iter().any(|f| f.name() == SLOT)
}

/// Fills a marked slot (the second pass, bottom up): with the input's row kinds where the
/// input is a changelog, else with the NULL it held.
pub fn fill_slot(projection: Projection) -> Result<LogicalPlan> {
    let kinds = row_kind_column(projection.input.schema());
    let input_schema = Arc::clone(projection.input.schema());
    let expr = projection
        .expr
        .into_iter()
        .map(|expr| match (expr, kinds) {
            (Expr::Alias(alias), Some(index)) if alias.name == SLOT => {
                let kinds = Expr::Column(Column::from(input_schema.qualified_field(index)));
                Ok(with_kinds(*alias.expr, kinds).alias(OP_COLUMN))
            }
            (expr, _) if expr.schema_name().to_string() == SLOT => Ok(renamed(expr, OP_COLUMN)),
            (expr, _) => Ok(expr),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(LogicalPlan::Projection(Projection::try_new(
        expr,
        projection.input,
    )?))
}

/// `NULL AS op`, possibly cast to the column's type: what the planner fills a left-out
/// column with.
fn is_null_op(expr: &Expr) -> bool {
    let Expr::Alias(Alias { expr, name, .. }) = expr else {
        return false;
    };
    name == OP_COLUMN && is_null(expr)
}

fn is_null(expr: &Expr) -> bool {
    match expr {
        Expr::Literal(value, _) => value.is_null(),
        Expr::Cast(Cast { expr, .. }) | Expr::TryCast(TryCast { expr, .. }) => is_null(expr),
        _ => false,
    }
}

/// The slot's NULL replaced by the row kinds, keeping a cast to another column type; a
/// cast to the kinds' own type is dropped so the column stays marked as row kinds.
fn with_kinds(null: Expr, kinds: Expr) -> Expr {
    match null {
        Expr::Cast(Cast { field, .. }) | Expr::TryCast(TryCast { field, .. })
            if field.data_type() == &DataType::Utf8 =>
        {
            kinds
        }
        Expr::Cast(Cast { field, .. }) => Expr::Cast(Cast::new_from_field(Box::new(kinds), field)),
        Expr::TryCast(TryCast { field, .. }) => {
            Expr::TryCast(TryCast::new_from_field(Box::new(kinds), field))
        }
        _ => kinds,
    }
}

fn renamed(expr: Expr, name: &str) -> Expr {
    match expr {
        Expr::Alias(alias) => alias.expr.alias(name),
        other => other.alias(name),
    }
}
