//! A resolved PTF call: the function, its scalar argument values, and how each table
//! argument is passed.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType as ArrowType, Field};
use datafusion::common::{Result, ScalarValue, plan_err};
use datafusion::logical_expr::Expr;
use udf_core::ptf::ProcessTableFunction;
use udf_core::types::{DataType, TypeKind};
use udf_core::{FunctionSpec, Metrics, Semantics};

use crate::streaming::event_time::EventTime;

/// How a table argument is passed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableBinding {
    /// The argument's name in the signature.
    pub name: String,
    pub semantics: Semantics,
    /// PARTITION BY columns of the input.
    pub keys: Vec<Expr>,
    /// The function's row: one expression per field, over the input.
    pub row: Vec<Expr>,
    /// The function's row field names.
    pub row_names: Vec<String>,
    /// Positions of the PARTITION BY columns within the function's row.
    pub key_positions: Vec<usize>,
    /// Copy every input column into the output.
    pub pass_through: bool,
    /// ORDER BY: input columns with (descending, nulls first); the first is the time column.
    pub order_by: Vec<(usize, bool, bool)>,
    /// The ORDER BY columns' names, for EXPLAIN.
    pub order_names: Vec<String>,
    /// The time column and its watermark: named by `on_time => DESCRIPTOR(ts)`, or the
    /// first ORDER BY column.
    pub event_time: Option<EventTime>,
    /// The row-kind column, when the table is a changelog (`supports_updates`).
    pub kinds: Option<Expr>,
}

/// A PTF call, planned.
#[derive(Clone)]
pub struct PtfCall {
    pub name: String,
    pub spec: Arc<FunctionSpec>,
    pub function: Arc<dyn ProcessTableFunction>,
    pub metrics: Metrics,
    /// The value of each scalar argument, in declaration order, of its parameter type.
    pub scalars: Vec<ScalarValue>,
    /// The table arguments, in declaration order (none for a function without one); each
    /// reads its own input of the node.
    pub tables: Vec<TableBinding>,
    /// With several tables, the type each PARTITION BY column of every table is cast to (the
    /// type they compare as), so equal keys meet; empty with one.
    pub key_types: Vec<ArrowType>,
    /// The type of the rows the function emits.
    pub row_type: DataType,
    /// `uid => '...'`.
    pub uid: Option<String>,
    /// Whether the call names `on_time` (`rowtime` in the output, `time()` in calls).
    pub on_time: bool,
}

impl fmt::Debug for PtfCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PtfCall")
            .field("name", &self.name)
            .field("scalars", &self.scalars)
            .field("tables", &self.tables)
            .finish_non_exhaustive()
    }
}

impl PartialEq for PtfCall {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && Arc::ptr_eq(&self.function, &other.function)
            && self.scalars == other.scalars
            && self.tables == other.tables
            && self.key_types == other.key_types
            && self.uid == other.uid
            && self.on_time == other.on_time
    }
}

impl PtfCall {
    /// Whether the function keeps state or timers per key (and so needs key slots).
    pub fn keyed(&self) -> bool {
        !self.spec.state.is_empty() || self.spec.on_timer
    }

    /// Whether the call has a time column (in every table, with several).
    pub fn event_time(&self) -> Option<&EventTime> {
        self.tables.first().and_then(|t| t.event_time.as_ref())
    }

    /// Whether the emitted rows are a ROW whose fields become columns (else one column).
    pub fn row_is_struct(&self) -> bool {
        matches!(self.row_type.kind, TypeKind::Row(_))
    }

    /// The function's output columns: the row's fields, or `EXPR$0` for a single value (as
    /// Flink names it).
    pub fn function_fields(&self) -> Result<Vec<Field>> {
        let fields: Vec<Field> = match &self.row_type.kind {
            TypeKind::Row(fields) => fields
                .iter()
                .map(|f| f.data_type.to_arrow_field(&f.name))
                .collect(),
            _ => vec![self.row_type.to_arrow_field("EXPR$0")],
        };
        if fields.is_empty() {
            return plan_err!("`{}` must produce at least one output column", self.name);
        }
        Ok(fields)
    }
}

/// Flink's rule for repeated output names: the first keeps its name, the next ones get
/// `name0`, `name1`, ...
pub fn unique_names(names: &mut [String]) {
    let mut seen: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
    for name in names.iter_mut() {
        let count = seen
            .entry(name.clone())
            .and_modify(|c| *c += 1)
            .or_insert(-1);
        if *count >= 0 {
            *name = format!("{name}{count}");
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn repeated_names_get_a_counter() {
        let mut names: Vec<String> = ["k", "v", "k", "k"].map(String::from).to_vec();
        super::unique_names(&mut names);
        assert_eq!(names, ["k", "v", "k0", "k1"]);
    }
}
