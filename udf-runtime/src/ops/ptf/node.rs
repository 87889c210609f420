//! The `ProcessTableFunction` logical node: one input per table argument (or one empty row
//! without a table), the call, and the output schema (rule 20 of docs/semantics.md): the
//! PARTITION BY columns of each table (or every column of the one table, when passed
//! through), then the function's columns.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::datatypes::FieldRef;
use datafusion::common::{DFSchema, DFSchemaRef, Result, TableReference};
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, UserDefinedLogicalNodeCore};
use udf_core::Semantics;

use super::call::{PtfCall, TableBinding, unique_names};

/// The name of the output column holding event time (Flink's).
pub const ROWTIME: &str = "rowtime";

#[derive(Clone, Debug)]
pub struct PtfNode {
    /// The plan of each table argument, in declaration order.
    pub inputs: Vec<LogicalPlan>,
    pub call: PtfCall,
    pub schema: DFSchemaRef,
}

impl PtfNode {
    pub fn try_new(inputs: Vec<LogicalPlan>, call: PtfCall) -> Result<Self> {
        let mut fields: Vec<FieldRef> = Vec::new();
        for (table, input) in call.tables.iter().zip(&inputs) {
            let input_schema = input.schema();
            if table.pass_through {
                fields.extend(input_schema.fields().iter().cloned());
            } else if table.semantics == Semantics::Set {
                for key in &table.keys {
                    fields.push(key.to_field(input_schema)?.1);
                }
            }
        }
        fields.extend(call.function_fields()?.into_iter().map(Arc::new));
        // With `on_time`, `rowtime`: the time of the row (or timer) that emitted.
        if let (Some(event_time), Some(input)) =
            (call.event_time().filter(|_| call.on_time), inputs.first())
        {
            let field = input.schema().field(event_time.column);
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
            inputs,
            call,
            schema: Arc::new(schema),
        })
    }
}

impl PartialEq for PtfNode {
    fn eq(&self, other: &Self) -> bool {
        self.call == other.call && self.inputs == other.inputs
    }
}

impl Eq for PtfNode {}

impl Hash for PtfNode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.call.name.hash(state);
        self.call.tables.hash(state);
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
        self.inputs.iter().collect()
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    /// Each table's keys, then its row.
    fn expressions(&self) -> Vec<Expr> {
        self.call
            .tables
            .iter()
            .flat_map(|table| table.keys.iter().chain(&table.row))
            .cloned()
            .collect()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ProcessTableFunction: {}", describe(&self.call))
    }

    fn with_exprs_and_inputs(&self, exprs: Vec<Expr>, inputs: Vec<LogicalPlan>) -> Result<Self> {
        let mut node = self.clone();
        let mut exprs = exprs.into_iter();
        for table in &mut node.call.tables {
            table.keys = exprs.by_ref().take(table.keys.len()).collect();
            table.row = exprs.by_ref().take(table.row.len()).collect();
        }
        node.inputs = inputs;
        Ok(node)
    }
}

/// `name(input => TABLE PARTITION BY [k] (set semantics), threshold => 5) state=[..] uid=..`
pub fn describe(call: &PtfCall) -> String {
    let signature = &call.spec.signatures[0];
    let mut scalars = call.scalars.iter();
    let mut tables = call.tables.iter();
    let args: Vec<String> = signature
        .args
        .iter()
        .map(|arg| match &arg.ty {
            udf_core::ArgType::Table(_) => match tables.next() {
                Some(table) => describe_table(table),
                None => format!("{} => ?", arg.name),
            },
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
    let several = call.tables.len() > 1;
    for table in &call.tables {
        let Some(event_time) = &table.event_time else {
            continue;
        };
        let on_time = match (call.on_time, several) {
            (true, false) => format!(" on_time={}", event_time.name),
            (true, true) => format!(" on_time={}.{}", table.name, event_time.name),
            (false, _) => String::new(),
        };
        let column = if several {
            format!("{}.{}", table.name, event_time.name)
        } else {
            event_time.name.clone()
        };
        text.push_str(&format!(
            "{on_time} watermark={column} - {} ms ({})",
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

/// `input => TABLE PARTITION BY [k] ORDER BY [ts] (set semantics)`.
fn describe_table(table: &TableBinding) -> String {
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
        table.name,
        keys.join(", ")
    )
}
