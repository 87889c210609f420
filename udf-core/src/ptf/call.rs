//! What the runtime hands a processor: the rows of one call with their key slots and times,
//! the watermark while each row is processed, the key's state and timers, and where emitted
//! rows go.

use crate::collector::RowKind;
use crate::ptf::state::StateStores;
use crate::ptf::timers::{FiredTimer, Timers};
use crate::scalar::ArgColumn;
use crate::table::RowSink;

/// The rows of one call: all from one table argument.
pub struct Rows<'a> {
    /// The table argument as one struct column of the function's row type; `None` for a
    /// function without a table argument (called once per row of an empty input).
    pub table: Option<&'a ArgColumn>,
    /// Which of the function's table arguments the rows belong to (their position among the
    /// table arguments, 0 with one).
    pub table_index: usize,
    pub count: usize,
    /// The state slot of each row's key (empty for a function without state or timers).
    pub keys: &'a [u32],
    /// Each row's `on_time` value (epoch ms), when the call names one.
    pub times: Option<&'a [i64]>,
    /// Each row's kind, when the table argument is a changelog (`supports_updates`).
    pub kinds: Option<&'a [RowKind]>,
}

impl Rows<'_> {
    /// The `on_time` value of `row`.
    #[inline]
    pub fn time(&self, row: usize) -> Option<i64> {
        self.times.map(|times| times[row])
    }
}

/// A watermark advance placed before a row that has no rows of its own: timers due at it fire
/// before the row (ORDER BY releases rows advance by advance, and an advance may release none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Firing {
    pub row: usize,
    pub watermark: i64,
}

/// The processor's watermark while each row of a call is processed (rule 25 of
/// docs/semantics.md), and the advances timers fire at before a row (rule 26).
pub struct WatermarkTrace<'a> {
    /// One watermark per row, when it moves between rows; otherwise `constant`.
    per_row: Option<&'a [Option<i64>]>,
    constant: Option<i64>,
    firings: &'a [Firing],
    /// How many of `firings` were handed out.
    next: usize,
}

impl<'a> WatermarkTrace<'a> {
    /// The same watermark for every row.
    pub fn constant(watermark: Option<i64>) -> Self {
        WatermarkTrace {
            per_row: None,
            constant: watermark,
            firings: &[],
            next: 0,
        }
    }

    /// The watermark of each row.
    pub fn per_row(watermarks: &'a [Option<i64>]) -> Self {
        WatermarkTrace {
            per_row: Some(watermarks),
            constant: None,
            firings: &[],
            next: 0,
        }
    }

    /// Advances between rows besides each row's own watermark, in row order.
    pub fn with_firings(mut self, firings: &'a [Firing]) -> Self {
        self.firings = firings;
        self
    }

    /// The watermark while `row` is processed.
    #[inline]
    pub fn at(&self, row: usize) -> Option<i64> {
        match self.per_row {
            Some(watermarks) => watermarks[row],
            None => self.constant,
        }
    }

    /// The highest watermark timers may fire at in the call.
    pub fn highest(&self) -> Option<i64> {
        let rows = match self.per_row {
            Some(watermarks) => watermarks.iter().flatten().max().copied(),
            None => self.constant,
        };
        let firings = self.firings.iter().map(|f| f.watermark).max();
        rows.max(firings)
    }

    /// The next watermark timers fire at before `row`: the advances placed before it first,
    /// then the row's own watermark (`own`, taken).
    #[inline]
    pub fn next_firing(&mut self, row: usize, own: &mut Option<i64>) -> Option<i64> {
        match self.firings.get(self.next) {
            Some(firing) if firing.row == row => {
                self.next += 1;
                Some(firing.watermark)
            }
            _ => own.take(),
        }
    }
}

/// Each table argument's watermark during a call of several table arguments: the rows'
/// own table's moves between rows (its own trace), the others' stay as they were.
#[derive(Default)]
pub struct TableWatermarks<'a> {
    /// Each table's watermark when the call began, in table-argument order.
    pub at_start: &'a [Option<i64>],
    /// The rows' own table's watermark while each row is processed.
    pub own: Option<WatermarkTrace<'a>>,
}

impl TableWatermarks<'_> {
    /// One table argument: its watermark is the processor's.
    pub fn single() -> Self {
        TableWatermarks::default()
    }
}

/// What a call is doing, kept up to date so an error or panic can name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// Evaluating this row of the call.
    Row(usize),
    /// Running `on_timer` for the timer at this index of [`Emission::fired`].
    Timer(usize),
}

/// Where a call's rows go and what the runtime learns from it.
///
/// A row `eval` emits is owned by its input row (`0..rows`); a row `on_timer` emits by
/// `timer_base` plus its timer's index in `fired`.
pub struct Emission<'a> {
    pub sink: &'a mut dyn RowSink,
    /// Emitted rows are handed to `sink` once this many have gathered.
    pub chunk: usize,
    /// The owner of the first fired timer's rows.
    pub timer_base: usize,
    /// The timers that fired, in order.
    pub fired: &'a mut Vec<FiredTimer>,
    /// Key slots left without state; the runtime may give them to other keys.
    pub released: &'a mut Vec<u32>,
    /// The row `eval` was last called for (one store per row: an error or panic reads it).
    pub row: usize,
    /// Whether the call is in `on_timer`, for the last timer of `fired`.
    pub in_timer: bool,
}

impl Emission<'_> {
    /// What the call was doing when it stopped.
    pub fn position(&self) -> Position {
        if self.in_timer {
            Position::Timer(self.fired.len().saturating_sub(1))
        } else {
            Position::Row(self.row)
        }
    }
}

/// One batch of rows for a processor.
pub struct ProcessCall<'a> {
    pub rows: Rows<'a>,
    pub watermarks: WatermarkTrace<'a>,
    /// With several table arguments, each table's watermark while each row is processed
    /// (`table_watermark(name)`); empty with one, whose watermark is the processor's.
    pub table_watermarks: TableWatermarks<'a>,
    /// Processing time (ms), for state TTL.
    pub now: i64,
    pub state: &'a mut dyn StateStores,
    /// The processor's timers: each call's requests are applied after it.
    pub timers: &'a mut dyn Timers,
    pub emission: Emission<'a>,
}

/// A call that fires the timers due (see [`Timers::due`]).
pub struct TimerCall<'a> {
    /// The watermark that made them due.
    pub watermark: i64,
    /// Processing time (ms), for state TTL.
    pub now: i64,
    pub state: &'a mut dyn StateStores,
    pub timers: &'a mut dyn Timers,
    pub emission: Emission<'a>,
}
