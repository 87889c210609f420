//! What a process table function sees of its call: `Context` (Flink's
//! `ProcessTableFunction.Context`), a first `&mut Context` parameter of `eval`.

use chrono::{DateTime, Utc};

use crate::Error;
use crate::collector::RowKind;
use crate::ptf::timers::{FiredTimer, TimerRequest, TimerRequests};
use crate::types::DataType;

/// How one table argument was passed (Flink's `TableSemantics`).
#[derive(Clone, Debug, PartialEq)]
pub struct TableSemantics {
    /// The argument's name in the function's signature.
    pub name: String,
    /// The row type the function reads.
    pub data_type: DataType,
    /// Positions (within the row) of the PARTITION BY columns.
    pub partition_by_columns: Vec<usize>,
    /// Positions of the ORDER BY columns.
    pub order_by_columns: Vec<usize>,
    /// Position of the `on_time` column, if the call names one.
    pub time_column: Option<usize>,
}

impl TableSemantics {
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    pub fn partition_by_columns(&self) -> &[usize] {
        &self.partition_by_columns
    }

    pub fn order_by_columns(&self) -> &[usize] {
        &self.order_by_columns
    }

    pub fn time_column(&self) -> Option<usize> {
        self.time_column
    }
}

/// What every call of one PTF invocation shares: decided at planning.
#[derive(Clone, Debug, PartialEq)]
pub struct CallInfo {
    /// The SQL name the function was called by.
    pub function: String,
    pub tables: Vec<TableSemantics>,
    /// The state entries' names, in declaration order.
    pub state: Vec<String>,
    /// Whether the function has `on_timer` (and so may register timers).
    pub on_timer: bool,
}

/// The context of one `eval` call.
pub struct Context<'a> {
    info: &'a CallInfo,
    /// Bit `i`: state entry `i` is cleared once the call returns.
    cleared: u64,
    error: Option<Error>,
    /// The row's `on_time` value (epoch ms), with event time.
    time: Option<i64>,
    /// The processor's watermark (epoch ms), once every input has reported one.
    watermark: Option<i64>,
    /// Timer requests, applied after the call.
    timers: TimerRequests,
    /// With several table arguments: the table of the row, each table's watermark when the
    /// call began, and the row's own table's watermark now (see `table_watermark`).
    table_index: usize,
    table_watermarks: &'a [Option<i64>],
    own_watermark: Option<i64>,
    /// The row's kind: `+I` unless its table is a changelog.
    row_kind: RowKind,
}

impl<'a> Context<'a> {
    #[doc(hidden)]
    pub fn new(info: &'a CallInfo) -> Self {
        Context::at(info, None, None)
    }

    /// The context of a call for a row at `time` under `watermark` (epoch ms).
    #[doc(hidden)]
    pub fn at(info: &'a CallInfo, time: Option<i64>, watermark: Option<i64>) -> Self {
        Context {
            info,
            cleared: 0,
            error: None,
            time,
            watermark,
            timers: TimerRequests::default(),
            table_index: 0,
            table_watermarks: &[],
            own_watermark: None,
            row_kind: RowKind::Insert,
        }
    }

    /// The table the call's rows come from and each table's watermark when it began (a call
    /// of several table arguments).
    #[doc(hidden)]
    pub fn set_tables(&mut self, table_index: usize, at_start: &'a [Option<i64>]) {
        self.table_index = table_index;
        self.table_watermarks = at_start;
    }

    /// The row's own table's watermark (a call of several table arguments).
    #[doc(hidden)]
    #[inline]
    pub fn set_own_watermark(&mut self, watermark: Option<i64>) {
        self.own_watermark = watermark;
    }

    /// The kind of the row about to be processed (a changelog table argument).
    #[doc(hidden)]
    #[inline]
    pub fn set_row_kind(&mut self, kind: RowKind) {
        self.row_kind = kind;
    }

    /// The kind of the row `eval` is called for: `+I` for an insert-only table; any of
    /// `+I`, `-U`, `+U`, `-D` for a table argument declared `supports_updates` that is a
    /// changelog (Flink's `Row.getKind()`).
    pub fn row_kind(&self) -> RowKind {
        self.row_kind
    }

    /// Readies a context of an earlier row for the next one (generated code keeps one per
    /// batch).
    #[doc(hidden)]
    #[inline]
    pub fn next_row(&mut self, time: Option<i64>, watermark: Option<i64>) {
        self.cleared = 0;
        self.time = time;
        self.watermark = watermark;
        self.timers.clear();
    }

    /// Event time: the row's time and the watermark (Flink's `timeContext(Instant.class)`).
    pub fn time_context(&mut self) -> TimeContext<'_, 'a> {
        TimeContext { context: self }
    }

    /// How the table argument `name` was passed: its row type and PARTITION BY columns.
    pub fn table_semantics_for(&self, name: &str) -> Option<&'a TableSemantics> {
        self.info.tables.iter().find(|t| t.name == name)
    }

    /// Clears state entry `name` once this call returns (what the call wrote to it is
    /// dropped too). An unknown name fails the query after the call.
    pub fn clear_state(&mut self, name: &str) {
        match self.info.state.iter().position(|s| s == name) {
            Some(index) => self.cleared |= 1 << index,
            None => {
                if self.error.is_none() {
                    self.error = Some(Error::msg(format!(
                        "clear_state(\"{name}\"): `{}` has no state entry `{name}` (its entries: {})",
                        self.info.function,
                        if self.info.state.is_empty() {
                            "none".to_owned()
                        } else {
                            self.info.state.join(", ")
                        }
                    )));
                }
            }
        }
    }

    /// Clears every state entry of the current key once this call returns.
    pub fn clear_all_state(&mut self) {
        self.cleared = u64::MAX;
    }

    /// Clears all state and every timer of the current key once this call returns.
    pub fn clear_all(&mut self) {
        self.clear_all_state();
        self.timers.push(TimerRequest::ClearAll);
    }

    /// Whether state entry `index` is to be cleared.
    #[doc(hidden)]
    #[inline]
    pub fn is_cleared(&self, index: usize) -> bool {
        self.cleared & (1 << index) != 0
    }

    /// The timer requests of the call, in order (applying them drains them).
    #[doc(hidden)]
    #[inline]
    pub fn timer_requests(&mut self) -> &mut TimerRequests {
        &mut self.timers
    }

    fn request_timer(&mut self, request: TimerRequest<'_>) {
        if self.info.on_timer {
            self.timers.push(request);
        } else if self.error.is_none() {
            self.error = Some(Error::msg(format!(
                "`{}` registers a timer but has no `on_timer` method to fire it",
                self.info.function
            )));
        }
    }

    /// An error a request made during the call.
    #[doc(hidden)]
    #[inline]
    pub fn take_error(&mut self) -> Option<Error> {
        // Looked at once per row: only read, unless there is one.
        self.error.as_ref()?;
        self.error.take()
    }
}

/// Event time as a call sees it; times are instants (`DateTime<Utc>`).
pub struct TimeContext<'c, 'a> {
    context: &'c mut Context<'a>,
}

fn instant(millis: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(millis)
}

impl TimeContext<'_, '_> {
    /// The `on_time` value of the row being processed; `None` when the call names no
    /// `on_time` column.
    pub fn time(&self) -> Option<DateTime<Utc>> {
        self.context.time.and_then(instant)
    }

    /// [`TimeContext::time`] in milliseconds since the epoch.
    pub fn time_millis(&self) -> Option<i64> {
        self.context.time
    }

    /// The processor's current watermark: the minimum over its inputs, `None` until every
    /// input has reported one (rule 25 of docs/semantics.md).
    pub fn current_watermark(&self) -> Option<DateTime<Utc>> {
        self.context
            .watermark
            .filter(|w| *w != i64::MAX)
            .and_then(instant)
    }

    /// The watermark of table argument `name`: the minimum over the input partitions of that
    /// table, `None` until each has reported one. With one table argument it is the current
    /// watermark; with several, `on_timer` sees none (as Flink's `tableWatermark()`), since a
    /// timer belongs to no table.
    pub fn table_watermark(&self, name: &str) -> Option<DateTime<Utc>> {
        let context = &*self.context;
        let tables = &context.info.tables;
        let index = tables.iter().position(|t| t.name == name)?;
        if tables.len() == 1 {
            return self.current_watermark();
        }
        let watermark = if index == context.table_index {
            context.own_watermark
        } else {
            *context.table_watermarks.get(index)?
        };
        watermark.filter(|w| *w != i64::MAX).and_then(instant)
    }

    /// Registers the timer `name` at `time`, replacing the key's timer of that name. It
    /// fires once the watermark reaches `time`; a time at or before the watermark fires at
    /// the next advance (rules 26–28 of docs/semantics.md).
    pub fn register_on_time(&mut self, name: &str, time: DateTime<Utc>) {
        self.register_on_time_millis(name, time.timestamp_millis());
    }

    /// [`TimeContext::register_on_time`] with the time in epoch milliseconds.
    pub fn register_on_time_millis(&mut self, name: &str, time: i64) {
        self.context.request_timer(TimerRequest::Register {
            name: Some(name),
            time,
        });
    }

    /// Registers an unnamed timer at `time` (at most one per key and time).
    pub fn register_on_time_unnamed(&mut self, time: DateTime<Utc>) {
        self.context.request_timer(TimerRequest::Register {
            name: None,
            time: time.timestamp_millis(),
        });
    }

    /// Deletes the key's timer `name`.
    pub fn clear_timer(&mut self, name: &str) {
        self.context.request_timer(TimerRequest::ClearNamed(name));
    }

    /// Deletes the key's unnamed timer at `time`.
    pub fn clear_timer_at(&mut self, time: DateTime<Utc>) {
        self.context
            .request_timer(TimerRequest::ClearAt(time.timestamp_millis()));
    }

    /// Deletes every timer of the key.
    pub fn clear_all_timers(&mut self) {
        self.context.request_timer(TimerRequest::ClearAll);
    }
}

/// The context of an `on_timer` call: a [`Context`] whose time is the timer's, and the
/// timer's name (Flink's `OnTimerContext`).
pub struct OnTimerContext<'a> {
    context: Context<'a>,
    timer: Option<&'a str>,
}

impl<'a> OnTimerContext<'a> {
    #[doc(hidden)]
    pub fn new(info: &'a CallInfo, timer: &'a FiredTimer, watermark: Option<i64>) -> Self {
        OnTimerContext {
            context: Context::at(info, Some(timer.time), watermark),
            timer: timer.name.as_deref(),
        }
    }

    /// The name of the timer that fired (`None` for an unnamed timer).
    pub fn current_timer(&self) -> Option<&str> {
        self.timer
    }
}

impl<'a> std::ops::Deref for OnTimerContext<'a> {
    type Target = Context<'a>;

    fn deref(&self) -> &Context<'a> {
        &self.context
    }
}

impl std::ops::DerefMut for OnTimerContext<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.context
    }
}
