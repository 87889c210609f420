//! The `UpdatingAggregate` logical node: DataFusion's `Aggregate` over a stream or a
//! changelog, checked for what an updating GROUP BY can compute, with the row-kind column
//! appended to its output.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use datafusion::common::{DFSchema, DFSchemaRef, Result, plan_err};
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::{Aggregate, Expr, LogicalPlan, UserDefinedLogicalNodeCore};

use datafusion::arrow::datatypes::{FieldRef, Schema};
use datafusion::physical_expr::PhysicalExpr;

use super::calls::{Call, CallFunction};
use crate::changelog::{self, row_kind_column};
use crate::functions::aggregate::capabilities::ours;

/// The built-in aggregate functions an updating GROUP BY computes (with retraction).
pub const BUILT_INS: [&str; 5] = ["count", "sum", "avg", "min", "max"];

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UpdatingAggregateNode {
    pub(crate) input: LogicalPlan,
    pub(crate) group_by: Vec<Expr>,
    /// The aggregate calls, possibly aliased, as in DataFusion's `Aggregate`.
    pub(crate) calls: Vec<Expr>,
    /// The aggregate's columns, then `op`.
    pub(crate) schema: DFSchemaRef,
}

impl UpdatingAggregateNode {
    /// The node for `aggregate`, or a planning error naming what it cannot compute.
    pub fn try_new(aggregate: Aggregate) -> Result<Self> {
        let updating = row_kind_column(aggregate.input.schema()).is_some();
        if aggregate
            .group_expr
            .iter()
            .any(|e| matches!(e, Expr::GroupingSet(_)))
        {
            return plan_err!(
                "GROUPING SETS, CUBE and ROLLUP over a stream or a changelog are not supported: group by plain keys"
            );
        }
        check_calls(&aggregate.aggr_expr, updating)?;
        let mut fields: Vec<_> = aggregate
            .schema
            .iter()
            .map(|(qualifier, field)| (qualifier.cloned(), field.clone()))
            .collect();
        fields.push((None, Arc::new(changelog::row_kind_field())));
        let schema = DFSchema::new_with_metadata(fields, aggregate.schema.metadata().clone())?;
        Ok(UpdatingAggregateNode {
            input: aggregate.input.as_ref().clone(),
            group_by: aggregate.group_expr,
            calls: aggregate.aggr_expr,
            schema: Arc::new(schema),
        })
    }
}

/// The aggregate function of a call, under its alias.
pub(crate) fn aggregate_function(call: &Expr) -> Result<&AggregateFunction> {
    match call {
        Expr::Alias(alias) => aggregate_function(&alias.expr),
        Expr::AggregateFunction(function) => Ok(function),
        other => plan_err!("`{other}` is not an aggregate call"),
    }
}

/// Whether the runtime's own aggregations compute `calls` (with `retract` when `updating`).
pub(crate) fn check_calls(calls: &[Expr], updating: bool) -> Result<()> {
    calls.iter().try_for_each(|call| check_call(call, updating))
}

fn check_call(call: &Expr, updating: bool) -> Result<()> {
    let function = aggregate_function(call)?;
    let name = function.func.name();
    if !function.params.order_by.is_empty() {
        return plan_err!(
            "`{call}`: an aggregate with ORDER BY over a stream or a changelog is not supported"
        );
    }
    if let Some(udaf) = ours(&function.func) {
        if updating && !udaf.spec().capabilities.retract {
            return plan_err!(
                "aggregate function `{name}` has no `retract`, which a GROUP BY over an updating input needs for its `-U` and `-D` rows; implement `retract`, or aggregate an insert-only input"
            );
        }
        return Ok(());
    }
    if !BUILT_INS.contains(&name.to_ascii_lowercase().as_str()) {
        return plan_err!(
            "aggregate function `{name}` cannot aggregate a stream or a changelog; the built-ins that can are COUNT, SUM, AVG, MIN and MAX, and every aggregate function of this project can"
        );
    }
    Ok(())
}

impl UserDefinedLogicalNodeCore for UpdatingAggregateNode {
    fn name(&self) -> &str {
        "UpdatingAggregate"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        self.group_by.iter().chain(&self.calls).cloned().collect()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let keys: Vec<String> = self.group_by.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        write!(
            f,
            "UpdatingAggregate: groupBy=[{}], aggr=[{}], emit=changelog",
            keys.join(", "),
            calls.join(", ")
        )
    }

    fn with_exprs_and_inputs(
        &self,
        exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let keys = self.group_by.len();
        Ok(UpdatingAggregateNode {
            input: inputs.swap_remove(0),
            group_by: exprs[..keys].to_vec(),
            calls: exprs[keys..].to_vec(),
            schema: self.schema.clone(),
        })
    }
}

/// Orders nodes for DataFusion's plan comparisons; the derived order would need one on
/// schemas, which have none.
impl PartialOrd for UpdatingAggregateNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.group_by.partial_cmp(&other.group_by) {
            Some(Ordering::Equal) => self.calls.partial_cmp(&other.calls),
            ordering => ordering,
        }
    }
}

/// Plans logical expressions over the node's input.
pub(crate) type PhysicalExprs<'a> = dyn Fn(&[Expr]) -> Result<Vec<Arc<dyn PhysicalExpr>>> + 'a;

/// The physical form of one aggregate call of the node; `physical` plans expressions over
/// the input.
pub(crate) fn call(
    call: &Expr,
    output: &FieldRef,
    physical: &PhysicalExprs,
    input: &Schema,
) -> Result<Call> {
    let function = aggregate_function(call)?;
    let computed = match ours(&function.func) {
        Some(udaf) => CallFunction::Ours(Arc::new(udaf.clone())),
        None => CallFunction::BuiltIn(function.func.name().to_ascii_lowercase()),
    };
    let distinct = function.params.distinct;
    let filter = match &function.params.filter {
        Some(filter) => physical(std::slice::from_ref(filter.as_ref()))?.pop(),
        None => None,
    };
    Call::new(
        computed,
        physical(&function.params.args)?,
        filter,
        distinct,
        output.clone(),
        input,
    )
}
