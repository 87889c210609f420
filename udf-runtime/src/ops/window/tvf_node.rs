//! The `WindowTvf` logical node: a window table function over a table — the table's
//! columns, then `window_start`, `window_end` (TIMESTAMP(3), the window's bounds in UTC) and
//! `window_time` (the window's last millisecond, of the time column's type), one row per
//! window a row belongs to.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType as ArrowType, Field, TimeUnit};
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};

use super::spec::WindowKind;
use crate::streaming::event_time::EventTime;

/// The window columns a window table function appends, in order.
pub const WINDOW_COLUMNS: [&str; 3] = ["window_start", "window_end", "window_time"];

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WindowTvfNode {
    pub(crate) input: LogicalPlan,
    pub(crate) window: WindowKind,
    /// The time column (a column of `input` with a declared watermark).
    pub(crate) time: EventTime,
    /// SESSION's PARTITION BY keys, over `input`.
    pub(crate) partition_by: Vec<Expr>,
    pub(crate) schema: DFSchemaRef,
}

impl WindowTvfNode {
    pub fn try_new(
        input: LogicalPlan,
        window: WindowKind,
        time: EventTime,
        partition_by: Vec<Expr>,
    ) -> Result<Self> {
        let time_type = input.schema().field(time.column).data_type().clone();
        let bound = ArrowType::Timestamp(TimeUnit::Millisecond, None);
        let window_time = match time_type {
            ArrowType::Timestamp(_, zone) => ArrowType::Timestamp(TimeUnit::Millisecond, zone),
            other => other,
        };
        let mut fields: Vec<_> = input
            .schema()
            .iter()
            .map(|(qualifier, field)| (qualifier.cloned(), field.clone()))
            .collect();
        for (name, data_type) in WINDOW_COLUMNS
            .into_iter()
            .zip([bound.clone(), bound, window_time])
        {
            fields.push((None, Arc::new(Field::new(name, data_type, false))));
        }
        let schema = DFSchema::new_with_metadata(fields, HashMap::new())?;
        Ok(WindowTvfNode {
            input,
            window,
            time,
            partition_by,
            schema: Arc::new(schema),
        })
    }
}

impl PartialOrd for WindowTvfNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.window.partial_cmp(&other.window) {
            Some(Ordering::Equal) => self.time.column.partial_cmp(&other.time.column),
            ordering => ordering,
        }
    }
}

impl UserDefinedLogicalNodeCore for WindowTvfNode {
    fn name(&self) -> &str {
        "WindowTvf"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        self.partition_by.clone()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "WindowTvf: {} on {}, watermark={} - {} ms",
            self.window, self.time.name, self.time.name, self.time.delay_millis
        )
    }

    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        Ok(WindowTvfNode {
            input: inputs.swap_remove(0),
            ..self.clone()
        })
    }
}
