//! The `ProcessTableFunction` logical node: the input table, the call, and the output
//! schema (rule 20 of docs/semantics.md): PARTITION BY columns (or every column, when passed through), then the
//! function's columns.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::datatypes::FieldRef;
use datafusion::common::{DFSchema, DFSchemaRef, Result, TableReference};
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, UserDefinedLogicalNodeCore};
use udf_core::Semantics;

use super::call::{PtfCall, unique_names};

/// The name of the output column holding event time (Flink's).
pub const ROWTIME: &str = "rowtime";

#[derive(Clone, Debug)]
pub struct PtfNode {
    pub input: LogicalPlan,
    pub call: PtfCall,
    pub schema: DFSchemaRef,
}

impl PtfNode {
    pub fn try_new(input: LogicalPlan, call: PtfCall) -> Result<Self> {
        let input_schema = input.schema().clone();
        let mut fields: Vec<FieldRef> = match &call.table {
            Some(table) if table.pass_through => input_schema.fields().iter().cloned().collect(),
            Some(table) if table.semantics == Semantics::Set => table
                .keys
                .iter()
                .map(|key| key.to_field(&input_schema).map(|(_, f)| f))
                .collect::<Result<_>>()?,
            _ => Vec::new(),
        };
        fields.extend(call.function_fields()?.into_iter().map(Arc::new));
        // With `on_time`, `rowtime`: the time of the row (or timer) that emitted.
        if let Some(event_time) = call.event_time.as_ref().filter(|_| call.on_time) {
            let field = input_schema.field(event_time.column);
            fields.push(Arc::new(
                field
                    .as_ref()
                    .clone()
                    .with_name(ROWTIME)
                    .with_nullable(false),
            ));
        }
        let mut names: Vec<String> = fields.iter().map(|f| f.name().clone()).collect();
        unique_names(&mut names);
        let fields: Vec<(Option<TableReference>, FieldRef)> = fields
            .into_iter()
            .zip(names)
            .map(|(f, name)| (None, Arc::new(f.as_ref().clone().with_name(name))))
            .collect();
        let schema = DFSchema::new_with_metadata(fields, HashMap::new())?;
        Ok(PtfNode {
            input,
            call,
            schema: Arc::new(schema),
        })
    }
}

impl PartialEq for PtfNode {
    fn eq(&self, other: &Self) -> bool {
        self.call == other.call && self.input == other.input
    }
}

impl Eq for PtfNode {}

impl Hash for PtfNode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.call.name.hash(state);
        self.call.table.hash(state);
    }
}

impl PartialOrd for PtfNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.call
            .name
            .partial_cmp(&other.call.name)
            .filter(|ordering| ordering.is_ne())
    }
}

impl UserDefinedLogicalNodeCore for PtfNode {
    fn name(&self) -> &str {
        "ProcessTableFunction"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        match &self.call.table {
            Some(table) => table.keys.iter().chain(&table.row).cloned().collect(),
            None => Vec::new(),
        }
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ProcessTableFunction: {}", describe(&self.call))
    }

    fn with_exprs_and_inputs(
        &self,
        exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let mut node = self.clone();
        if let Some(table) = node.call.table.as_mut() {
            let keys = table.keys.len();
            table.keys = exprs[..keys].to_vec();
            table.row = exprs[keys..].to_vec();
        }
        node.input = inputs.swap_remove(0);
        Ok(node)
    }
}

/// `name(input => TABLE PARTITION BY [k] SET SEMANTICS, threshold => 5) state=[..] uid=..`
pub fn describe(call: &PtfCall) -> String {
    let signature = &call.spec.signatures[0];
    let mut scalars = call.scalars.iter();
    let args: Vec<String> = signature
        .args
        .iter()
        .map(|arg| match (&arg.ty, &call.table) {
            (udf_core::ArgType::Table(_), Some(table)) => {
                let keys: Vec<String> = table.keys.iter().map(ToString::to_string).collect();
                let semantics = match table.semantics {
                    Semantics::Row => "row semantics",
                    Semantics::Set => "set semantics",
                };
                let through = if table.pass_through {
                    ", pass columns through"
                } else {
                    ""
                };
                let order = if table.order_by.is_empty() {
                    String::new()
                } else {
                    let columns: Vec<String> = table
                        .order_by
                        .iter()
                        .zip(&table.order_names)
                        .map(|((_, desc, nulls_first), c)| {
                            format!(
                                "{c}{}{}",
                                if *desc { " DESC" } else { "" },
                                if *nulls_first { " NULLS FIRST" } else { "" }
                            )
                        })
                        .collect();
                    format!(" ORDER BY [{}]", columns.join(", "))
                };
                format!(
                    "{} => TABLE PARTITION BY [{}]{order} ({semantics}{through})",
                    arg.name,
                    keys.join(", ")
                )
            }
            _ => {
                let value = scalars.next().map_or("?".to_owned(), |v| match v {
                    datafusion::common::ScalarValue::Utf8(Some(s)) => format!("'{s}'"),
                    other => other.to_string(),
                });
                format!("{} => {value}", arg.name)
            }
        })
        .collect();
    let mut text = format!("{}({})", call.name, args.join(", "));
    if !call.spec.state.is_empty() {
        let state: Vec<String> = call.spec.state.iter().map(ToString::to_string).collect();
        text.push_str(&format!(" state=[{}]", state.join(", ")));
    }
    if let Some(event_time) = &call.event_time {
        let on_time = if call.on_time {
            format!(" on_time={}", event_time.name)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "{on_time} watermark={} - {} ms ({})",
            event_time.name,
            event_time.delay_millis,
            match event_time.emission {
                crate::streaming::event_time::WatermarkEmission::EveryRow => "after every row",
                crate::streaming::event_time::WatermarkEmission::EveryBatch => "after every batch",
            }
        ));
    }
    if let Some(uid) = &call.uid {
        text.push_str(&format!(" uid={uid}"));
    }
    text
}
