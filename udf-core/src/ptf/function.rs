//! The contract of a process table function, implemented by `#[ptf]`: a processor per
//! virtual processor, called with batches of the rows routed to it.

use std::sync::Arc;

use crate::Error;
use crate::context::FunctionContext;
use crate::ptf::context::CallInfo;
use crate::ptf::state::StateBackend;
use crate::ptf::timers::{FiredTimer, TimerCall, Timers};
use crate::scalar::ArgColumn;
use crate::spec::FunctionSpec;
use crate::table::RowSink;
use crate::types::DataType;

/// A process table function in its vectorized form.
pub trait ProcessTableFunction: Send + Sync + 'static {
    /// The signature (table arguments are `ArgType::Table`) and the state entries.
    fn spec(&self) -> FunctionSpec;

    /// A fresh, unopened copy for one query, if the function has `open`/`close`.
    fn instantiate(&self) -> Option<Box<dyn ProcessTableFunction>> {
        None
    }

    /// Runs once per instance before the first call.
    fn open(&mut self, _context: &FunctionContext) -> Result<(), Error> {
        Ok(())
    }

    /// Runs once per instance after the last call.
    fn close(&mut self) {}

    /// A virtual processor: the state of the keys routed to it, and its calls.
    fn processor(self: Arc<Self>, setup: ProcessorSetup) -> Result<Box<dyn Processor>, Error>;
}

/// What every call of a processor shares.
pub struct ProcessorSetup {
    /// The type of the rows the function emits.
    pub output: DataType,
    /// One column of one value per scalar argument, in declaration order (NULL if left
    /// out), already of the parameter types.
    pub scalars: Vec<ArgColumn>,
    pub info: Arc<CallInfo>,
    /// Where the processor keeps its keyed state.
    pub backend: StateBackend,
}

/// One processor's calls and state.
pub trait Processor: Send {
    /// Calls `eval` for every row of `call`, in order (and `on_timer` for the timers due
    /// whenever the watermark moves between rows).
    fn process(&mut self, call: &mut ProcessCall<'_>) -> Result<(), Error>;

    /// Calls `on_timer` for every timer due (`call.timers.next_due()`), in order.
    fn on_timer(&mut self, call: &mut TimerCall<'_>) -> Result<(), Error> {
        let _ = call;
        Err(Error::msg("this function has no `on_timer`"))
    }

    /// Whether key slot `key` holds no state (so the runtime may give it to another key).
    fn key_is_empty(&self, key: usize) -> bool;

    /// State entries held (value entries plus non-empty views), for tests and metrics.
    fn state_entries(&self) -> usize;
}

/// One batch of rows for a processor.
pub struct ProcessCall<'a> {
    /// The table argument as one struct column of the function's row type; `None` for a
    /// function without table arguments (called once per row of an empty input).
    pub table: Option<&'a ArgColumn>,
    pub rows: usize,
    /// The state slot of each row's key (empty for stateless functions).
    pub keys: &'a [u32],
    /// Slots whose state became empty during the batch; the runtime may reuse them.
    pub released: &'a mut Vec<u32>,
    /// Processing time (ms), for state TTL.
    pub now: i64,
    /// Each row's `on_time` value (epoch ms), when the call names one.
    pub times: Option<&'a [i64]>,
    /// The processor's watermark while these rows are processed (when it does not move
    /// between them).
    pub watermark: Option<i64>,
    /// The processor's watermark while each row is processed, when it moves between rows:
    /// timers it makes due fire before the row (rule 26 of docs/semantics.md).
    pub watermarks: Option<&'a [Option<i64>]>,
    /// More watermarks timers fire at before a row, in order, besides the row's own: the
    /// watermark moved more than once between two rows (ORDER BY releases rows advance by
    /// advance, and an advance may release none).
    pub firings: &'a [(usize, i64)],
    /// How many of `firings` were handed out.
    pub firing: usize,
    /// The processor's timers: the requests of each call are applied after it.
    pub timers: &'a mut dyn Timers,
    /// Timers fired between rows, in order. A row emitted by `eval` is owned by its input
    /// row; one emitted by `on_timer` by `rows` + its timer's index here.
    pub fired: &'a mut Vec<FiredTimer>,
    /// The row being evaluated (or `rows` + the index of the timer being fired), kept up
    /// to date so an error or panic can name it.
    pub row: usize,
    /// Emitted rows are handed to `sink` once this many have gathered.
    pub chunk: usize,
    pub sink: &'a mut dyn RowSink,
}

impl ProcessCall<'_> {
    /// The `on_time` value of `row`.
    #[inline]
    pub fn time(&self, row: usize) -> Option<i64> {
        self.times.map(|times| times[row])
    }

    /// The next watermark timers must fire at before `row`: `firings` at this row first,
    /// then the row's own watermark (`own`, taken).
    #[inline]
    pub fn next_firing(&mut self, row: usize, own: &mut Option<i64>) -> Option<i64> {
        match self.firings.get(self.firing) {
            Some(&(at, watermark)) if at == row => {
                self.firing += 1;
                Some(watermark)
            }
            _ => own.take(),
        }
    }

    /// The watermark while `row` is processed.
    #[inline]
    pub fn watermark_at(&self, row: usize) -> Option<i64> {
        match self.watermarks {
            Some(watermarks) => watermarks[row],
            None => self.watermark,
        }
    }
}
