//! Calls in FROM with TABLE arguments — `f(input => TABLE t PARTITION BY k, ...)` — go to the
//! binder of the function's kind: process table functions (`ops/ptf/binding.rs`) and the SQL
//! form of table aggregates (`ops/table_aggregate/binding.rs`).

use std::sync::Arc;

use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::planner::{
    PlannedRelation, RelationPlanner, RelationPlannerContext, RelationPlanning,
};
use datafusion::sql::sqlparser::ast::{ObjectNamePart, TableFactor};
use udf_core::{Function, Metrics};

use crate::ops::ptf::binding::PtfArguments;
use crate::ops::table_aggregate;
use crate::session::catalog::Catalog;
use crate::streaming::event_time::Watermarks;

#[derive(Debug)]
pub struct TableArgumentPlanner {
    pub catalog: Arc<Catalog>,
    pub metrics: Metrics,
    pub watermarks: Arc<Watermarks>,
}

impl RelationPlanner for TableArgumentPlanner {
    fn plan_relation(
        &self,
        relation: TableFactor,
        context: &mut dyn RelationPlannerContext,
    ) -> Result<RelationPlanning> {
        let TableFactor::Table {
            name,
            args: Some(args),
            alias,
            ..
        } = &relation
        else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let [ObjectNamePart::Identifier(ident)] = name.0.as_slice() else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let Some(entry) = self.catalog.get(&context.normalize_ident(ident.clone())) else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let plan = match &entry.function {
            Function::TableAggregate(function) => table_aggregate::binding::plan(
                &entry.name,
                &entry.spec,
                function,
                &args.args,
                context,
            )?,
            Function::Process(function) => PtfArguments {
                name: &entry.name,
                spec: &entry.spec,
                function,
                watermarks: &self.watermarks,
                metrics: &self.metrics,
            }
            .plan(&args.args, context)?,
            _ => {
                return plan_err!(
                    "`{}` is a {} function; only table aggregates and process table functions are called with a TABLE argument in FROM",
                    entry.name,
                    entry.spec.kind
                );
            }
        };
        Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
            plan,
            alias.clone(),
        ))))
    }
}
