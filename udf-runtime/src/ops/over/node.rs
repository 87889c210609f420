//! The `EventTimeOver` logical node: OVER windows over a stream, ordered by a time attribute
//! (`OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND
//! CURRENT ROW)` or `ROWS BETWEEN n PRECEDING AND CURRENT ROW`): each row is emitted once the
//! watermark passes its time, with the aggregates over its frame (Flink's row-time OVER).

use std::cmp::Ordering;
use std::fmt;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchemaRef, Result, ScalarValue, plan_err};
use datafusion::logical_expr::expr::{AggregateFunction, WindowFunction};
use datafusion::logical_expr::{
    Expr, LogicalPlan, SortExpr, UserDefinedLogicalNodeCore, Window, WindowFrameBound,
    WindowFrameUnits, WindowFunctionDefinition,
};

use crate::functions::aggregate::capabilities::ours;
use crate::ops::updating_aggregate::node::check_calls;
use crate::streaming::event_time::{EventTime, Watermarks};
use crate::streaming::time_attribute;

/// Which rows before the current one a frame holds (it always ends at the current row).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd)]
pub enum Frame {
    /// `UNBOUNDED PRECEDING`: every row of the key so far.
    Unbounded,
    /// `RANGE BETWEEN INTERVAL .. PRECEDING`: rows at most this many milliseconds earlier,
    /// and every row of the same time.
    Range(i64),
    /// `ROWS BETWEEN n PRECEDING`: the `n` rows before, in time order.
    Rows(u64),
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Frame::Unbounded => write!(f, "UNBOUNDED PRECEDING"),
            Frame::Range(millis) => write!(f, "RANGE {millis} ms PRECEDING"),
            Frame::Rows(rows) => write!(f, "ROWS {rows} PRECEDING"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventTimeOverNode {
    pub(crate) input: LogicalPlan,
    pub(crate) keys: Vec<Expr>,
    pub(crate) time: EventTime,
    pub(crate) frame: Frame,
    /// The window functions as aggregate calls (what the updating GROUP BY computes).
    pub(crate) calls: Vec<Expr>,
    pub(crate) schema: DFSchemaRef,
}

impl EventTimeOverNode {
    /// The node for `window` over a stream, or a planning error naming what it cannot
    /// compute.
    pub fn try_new(window: &Window, watermarks: &Watermarks) -> Result<Self> {
        let mut shared: Option<(Vec<Expr>, Vec<SortExpr>, Frame)> = None;
        let mut calls = Vec::with_capacity(window.window_expr.len());
        for expr in &window.window_expr {
            let Expr::WindowFunction(function) = expr.clone().unalias_nested().data else {
                return plan_err!("`{expr}` is not a window function");
            };
            let WindowFunction { fun, params } = function.as_ref();
            let WindowFunctionDefinition::AggregateUDF(udaf) = fun else {
                return plan_err!(
                    "`{expr}`: over a stream, OVER windows compute aggregate functions only (not {fun})"
                );
            };
            if params.distinct {
                return plan_err!(
                    "`{expr}`: DISTINCT in OVER windows over a stream is not supported"
                );
            }
            let frame = frame(expr, params)?;
            match &shared {
                None => {
                    shared = Some((params.partition_by.clone(), params.order_by.clone(), frame))
                }
                Some((keys, order, first)) => {
                    if keys != &params.partition_by || order != &params.order_by || *first != frame
                    {
                        return plan_err!(
                            "the OVER windows of one query over a stream must share PARTITION BY, ORDER BY and frame"
                        );
                    }
                }
            }
            calls.push(Expr::AggregateFunction(AggregateFunction::new_udf(
                udaf.clone(),
                params.args.clone(),
                false,
                params.filter.clone(),
                vec![],
                params.null_treatment,
            )));
        }
        let Some((keys, order, frame)) = shared else {
            return plan_err!("a Window node without window functions");
        };
        check_calls(&calls, false)?;
        if frame != Frame::Unbounded {
            // Rows leave a bounded frame: project functions need `retract`.
            for call in &calls {
                let Expr::AggregateFunction(function) = call else {
                    continue;
                };
                if let Some(udaf) = ours(&function.func)
                    && !udaf.spec().capabilities.retract
                {
                    return plan_err!(
                        "aggregate function `{}` has no `retract`, which the OVER frame `{frame} AND CURRENT ROW` needs for rows that leave the frame; implement `retract` or use a frame starting at UNBOUNDED PRECEDING",
                        function.func.name()
                    );
                }
            }
        }
        let time = time_attribute_of(window, &order, watermarks)?;
        Ok(EventTimeOverNode {
            input: window.input.as_ref().clone(),
            keys,
            time,
            frame,
            calls,
            schema: window.schema.clone(),
        })
    }
}

/// The frame, if it ends at the current row and starts where a row-time OVER can.
fn frame(
    expr: &Expr,
    params: &datafusion::logical_expr::expr::WindowFunctionParams,
) -> Result<Frame> {
    let frame = &params.window_frame;
    if !matches!(frame.end_bound, WindowFrameBound::CurrentRow) {
        return plan_err!(
            "`{expr}`: over a stream an OVER frame ends at CURRENT ROW (rows after it have not come yet)"
        );
    }
    let WindowFrameBound::Preceding(start) = &frame.start_bound else {
        return plan_err!("`{expr}`: over a stream an OVER frame starts before the current row");
    };
    if start.is_null() {
        return Ok(Frame::Unbounded);
    }
    match (frame.units, start) {
        (WindowFrameUnits::Rows, ScalarValue::UInt64(Some(rows))) => Ok(Frame::Rows(*rows)),
        (WindowFrameUnits::Range, ScalarValue::IntervalMonthDayNano(Some(v))) if v.months == 0 => {
            Ok(Frame::Range(
                i64::from(v.days) * 86_400_000 + v.nanoseconds / 1_000_000,
            ))
        }
        (WindowFrameUnits::Range, ScalarValue::IntervalDayTime(Some(v))) => Ok(Frame::Range(
            i64::from(v.days) * 86_400_000 + i64::from(v.milliseconds),
        )),
        _ => plan_err!(
            "`{expr}`: over a stream an OVER frame is ROWS BETWEEN n PRECEDING, RANGE BETWEEN INTERVAL '..' PRECEDING or UNBOUNDED PRECEDING, AND CURRENT ROW"
        ),
    }
}

/// The ORDER BY column: ascending, a time attribute with a declared watermark.
fn time_attribute_of(
    window: &Window,
    order: &[SortExpr],
    watermarks: &Watermarks,
) -> Result<EventTime> {
    let input = window.input.as_ref();
    let column = match order {
        [sort] if sort.asc => match &sort.expr {
            Expr::Column(column) => input.schema().index_of_column(column).ok(),
            _ => None,
        },
        _ => None,
    };
    let Some(index) = column else {
        return plan_err!(
            "an OVER window over a stream must ORDER BY one time column, ascending, with a watermark (Flink's time attribute)"
        );
    };
    let field = input.schema().field(index);
    if !matches!(field.data_type(), DataType::Timestamp(..)) {
        return plan_err!(
            "an OVER window over a stream must ORDER BY one time column, ascending, with a watermark (Flink's time attribute); `{}` is {}",
            field.name(),
            field.data_type()
        );
    }
    let sources = time_attribute::sources(input, index, watermarks);
    let Some(spec) = sources.iter().find_map(|s| s.watermark.clone()) else {
        return plan_err!(
            "`{}` has no watermark, so an OVER window over a stream cannot order by it: declare one with `session.declare_watermark`",
            field.name()
        );
    };
    Ok(EventTime::declared(field.name(), index, &spec))
}

impl PartialOrd for EventTimeOverNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.keys.partial_cmp(&other.keys) {
            Some(Ordering::Equal) => self.calls.partial_cmp(&other.calls),
            ordering => ordering,
        }
    }
}

impl UserDefinedLogicalNodeCore for EventTimeOverNode {
    fn name(&self) -> &str {
        "EventTimeOver"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        self.keys.iter().chain(&self.calls).cloned().collect()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let keys: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        write!(
            f,
            "EventTimeOver: partitionBy=[{}], orderBy={} (watermark - {} ms), {} AND CURRENT ROW, aggr=[{}]",
            keys.join(", "),
            self.time.name,
            self.time.delay_millis,
            self.frame,
            calls.join(", ")
        )
    }

    fn with_exprs_and_inputs(
        &self,
        exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let keys = self.keys.len();
        Ok(EventTimeOverNode {
            input: inputs.swap_remove(0),
            keys: exprs[..keys].to_vec(),
            calls: exprs[keys..].to_vec(),
            ..self.clone()
        })
    }
}
