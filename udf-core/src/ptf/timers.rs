//! Timers as calls see them: requests a call makes through its `TimeContext`, applied by
//! the processor's timer service once the call returns, and the timers that fire.

use crate::table::RowSink;

/// What a call asked of the timers of its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimerRequest {
    /// Registers a timer at `time` (epoch ms); a named one replaces the key's timer of that
    /// name, an unnamed one exists at most once per time.
    Register { name: Option<String>, time: i64 },
    /// Deletes the key's timer `name`.
    ClearNamed(String),
    /// Deletes the key's unnamed timer at `time`.
    ClearAt(i64),
    /// Deletes every timer of the key.
    ClearAll,
}

/// A processor's timer service, as generated code sees it.
pub trait Timers {
    /// Applies, in order, the requests a call for `key` made, draining them (the call's
    /// buffer is reused).
    fn apply(&mut self, key: u32, requests: &mut Vec<TimerRequest>);

    /// Whether timers are due now that the watermark is `watermark`: if it passed the one
    /// timers last fired at, the timers at or before it that are registered at this moment
    /// become the batch to fire (one registered while they fire waits for the next advance).
    fn due(&mut self, watermark: i64) -> bool;

    /// The next timer of the batch still registered (an earlier timer of its key may have
    /// deleted it), taken out — its name forgotten — before `on_timer` runs.
    fn next_due(&mut self) -> Option<FiredTimer>;
}

/// A timer that fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiredTimer {
    pub key: u32,
    pub time: i64,
    pub name: Option<std::sync::Arc<str>>,
}

/// A call that fires the timers due (see [`Timers::due`]).
pub struct TimerCall<'a> {
    /// The watermark that made them fire.
    pub watermark: i64,
    /// Processing time (ms), for state TTL.
    pub now: i64,
    pub timers: &'a mut dyn Timers,
    /// The timers fired, in order; rows `on_timer` emits are owned by their timer's index
    /// here.
    pub fired: &'a mut Vec<FiredTimer>,
    /// The timer being fired (its index in `fired`), kept up to date so an error or panic
    /// can name it.
    pub row: usize,
    /// Emitted rows are handed to `sink` once this many have gathered.
    pub chunk: usize,
    pub sink: &'a mut dyn RowSink,
    /// Keys whose state became empty.
    pub released: &'a mut Vec<u32>,
}

/// A timer service for calls that can have no timers.
pub struct NoTimers;

impl Timers for NoTimers {
    fn apply(&mut self, _key: u32, requests: &mut Vec<TimerRequest>) {
        requests.clear();
    }

    fn due(&mut self, _watermark: i64) -> bool {
        false
    }

    fn next_due(&mut self) -> Option<FiredTimer> {
        None
    }
}
