//! `TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))` and its kin — `HOP(TABLE t,
//! DESCRIPTOR(ts), slide, size)`, `CUMULATE(TABLE t, DESCRIPTOR(ts), step, size)`,
//! `SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap)` — in FROM:
//! the window table function as a [`WindowTvfNode`]. Arguments go by position or by Flink's
//! names (`DATA`, `TIMECOL`, `SIZE`, `SLIDE`, `STEP`, `GAP`). The time column must have a declared
//! watermark (a time attribute, in Flink's words).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType as ArrowType, TimeUnit};
use datafusion::common::{DFSchema, Result, ScalarValue, plan_err};
use datafusion::logical_expr::planner::{
    PlannedRelation, RelationPlanner, RelationPlannerContext, RelationPlanning,
};
use datafusion::logical_expr::{Expr, Extension, LogicalPlan};
use datafusion::sql::sqlparser::ast::{
    Expr as SqlExpr, FunctionArg, FunctionArguments, ObjectNamePart, TableFactor,
};

use super::spec::WindowKind;
use super::tvf_node::WindowTvfNode;
use crate::ops::lateral::binding::table_call;
use crate::plan::table_argument::{Given, call_arguments, descriptor_columns};
use crate::streaming::event_time::{EventTime, Watermarks};
use crate::streaming::time_attribute;

#[derive(Debug)]
pub struct WindowTvfPlanner {
    pub watermarks: Arc<Watermarks>,
}

/// The window table functions and the names of their arguments after `DATA` and `TIMECOL`.
const FUNCTIONS: [(&str, &[&str]); 4] = [
    ("tumble", &["size"]),
    ("hop", &["slide", "size"]),
    ("cumulate", &["step", "size"]),
    ("session", &["gap"]),
];

impl RelationPlanner for WindowTvfPlanner {
    fn plan_relation(
        &self,
        relation: TableFactor,
        context: &mut dyn RelationPlannerContext,
    ) -> Result<RelationPlanning> {
        let Some((SqlExpr::Function(function), alias)) = table_call(&relation) else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let [ObjectNamePart::Identifier(ident)] = function.name.0.as_slice() else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let name = ident.value.to_ascii_lowercase();
        let Some((_, sizes)) = FUNCTIONS.iter().find(|(n, _)| *n == name) else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let upper = name.to_ascii_uppercase();
        let FunctionArguments::List(list) = &function.args else {
            return plan_err!("{upper} takes a table, a DESCRIPTOR of its time column and sizes");
        };
        let mut names = vec!["data", "timecol"];
        names.extend_from_slice(sizes);
        let args = ordered(&upper, &names, &list.args)?;
        let mut args = args.into_iter();
        let Some(Given::Table(table)) = args.next() else {
            return plan_err!("the first argument of {upper} is a table: `TABLE t`");
        };
        if (name != "session" && !table.partition_by.is_empty()) || !table.order_by.is_empty() {
            return plan_err!(
                "the table of {upper} takes no {}",
                if table.order_by.is_empty() {
                    "PARTITION BY (only SESSION does)"
                } else {
                    "ORDER BY"
                }
            );
        }
        let input = context.plan(TableFactor::Derived {
            lateral: false,
            subquery: table.query,
            alias: None,
            sample: None,
        })?;
        let input_schema = input.schema().clone();
        let partition_by = table
            .partition_by
            .into_iter()
            .map(|expr| context.sql_to_expr(expr, &input_schema))
            .collect::<Result<Vec<_>>>()?;
        let column = match args.next() {
            Some(Given::Value(value)) => descriptor(&upper, *value)?,
            _ => return plan_err!("the second argument of {upper} is `DESCRIPTOR(time column)`"),
        };
        let mut millis = Vec::new();
        for (size, given) in sizes.iter().zip(args) {
            let Given::Value(value) = given else {
                return plan_err!("`{size}` of {upper} is an interval, not a table");
            };
            millis.push(interval_millis(
                &upper,
                size,
                context.sql_to_expr(*value, &DFSchema::empty())?,
            )?);
        }
        let window = match (name.as_str(), millis.as_slice()) {
            ("tumble", [size]) => WindowKind::Tumble { size: *size },
            ("hop", [slide, size]) => WindowKind::Hop {
                slide: *slide,
                size: *size,
            },
            ("cumulate", [step, size]) if size % step == 0 => WindowKind::Cumulate {
                step: *step,
                size: *size,
            },
            ("cumulate", _) => {
                return plan_err!("the size of CUMULATE must be a whole number of steps");
            }
            ("session", [gap]) => WindowKind::Session { gap: *gap },
            _ => unreachable!("arguments were ordered by the function's names"),
        };
        let time = self.time_attribute(&upper, &input, &column)?;
        let node = WindowTvfNode::try_new(input, window, time, partition_by)?;
        let plan = LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        });
        Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
            plan,
            alias.clone(),
        ))))
    }
}

impl WindowTvfPlanner {
    /// The time column and the watermark declared where it is read from.
    fn time_attribute(
        &self,
        function: &str,
        input: &LogicalPlan,
        column: &str,
    ) -> Result<EventTime> {
        let schema = input.schema();
        let Some(index) = schema
            .fields()
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(column))
        else {
            return plan_err!("DESCRIPTOR(`{column}`) of {function} names no column of its table");
        };
        let field = schema.field(index);
        if !matches!(
            field.data_type(),
            ArrowType::Timestamp(TimeUnit::Second | TimeUnit::Millisecond, _)
        ) {
            return plan_err!(
                "the time column of {function} must be a TIMESTAMP or TIMESTAMP_LTZ of precision up to 3; `{column}` is {}",
                field.data_type()
            );
        }
        let sources = time_attribute::sources(input, index, &self.watermarks);
        let Some(spec) = sources.iter().find_map(|s| s.watermark.clone()) else {
            let table = sources.last().map_or("<table>", |s| s.table.as_str());
            return plan_err!(
                "`{column}` has no watermark, so {function} cannot window by it: declare one with `session.declare_watermark(\"{table}\", \"{column}\", delay)` or `WATERMARK FOR`"
            );
        };
        Ok(EventTime::declared(field.name(), index, &spec))
    }
}

/// The arguments in the function's order, whether given by position or by name.
fn ordered(function: &str, names: &[&str], args: &[FunctionArg]) -> Result<Vec<Given>> {
    let given = call_arguments(function, args)?;
    if given.len() != names.len() {
        return plan_err!(
            "{function} takes {} arguments ({}), not {}",
            names.len(),
            names.join(", ").to_ascii_uppercase(),
            given.len()
        );
    }
    let mut slots: Vec<Option<Given>> = names.iter().map(|_| None).collect();
    for (position, (name, value)) in given.into_iter().enumerate() {
        let slot = match name {
            None => position,
            Some(name) => match names
                .iter()
                .position(|n| n.eq_ignore_ascii_case(&name.value))
            {
                Some(slot) => slot,
                None => {
                    return plan_err!(
                        "{function} has no argument `{}`; its arguments are {}",
                        name.value,
                        names.join(", ").to_ascii_uppercase()
                    );
                }
            },
        };
        if slots[slot].replace(value).is_some() {
            return plan_err!(
                "argument {} of {function} is given twice",
                names[slot].to_ascii_uppercase()
            );
        }
    }
    Ok(slots
        .into_iter()
        .map(|s| s.expect("every slot filled: as many arguments as names"))
        .collect())
}

/// `DESCRIPTOR(ts)`: the column's name.
fn descriptor(function: &str, value: SqlExpr) -> Result<String> {
    match descriptor_columns(&value).as_deref() {
        Some([column]) => Ok(column.clone()),
        _ => plan_err!("the time column of {function} is given as `DESCRIPTOR(ts)`, not `{value}`"),
    }
}

/// An interval literal in milliseconds (positive, of days and less).
fn interval_millis(function: &str, argument: &str, value: Expr) -> Result<i64> {
    let millis = match &value {
        Expr::Literal(ScalarValue::IntervalMonthDayNano(Some(v)), _) if v.months == 0 => {
            Some(i64::from(v.days) * 86_400_000 + v.nanoseconds / 1_000_000)
        }
        Expr::Literal(ScalarValue::IntervalDayTime(Some(v)), _) => {
            Some(i64::from(v.days) * 86_400_000 + i64::from(v.milliseconds))
        }
        _ => None,
    };
    match millis {
        Some(millis) if millis > 0 => Ok(millis),
        _ => plan_err!(
            "`{}` of {function} must be a positive interval of days or less (`INTERVAL '10' SECOND`), not `{value}`",
            argument.to_ascii_uppercase()
        ),
    }
}
