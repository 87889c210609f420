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

    /// Whether timer `index` of the firing batch is still registered (an earlier timer of
    /// its key may have deleted it); if so it is taken out — its name forgotten — before
    /// `on_timer` runs.
    fn take(&mut self, index: usize) -> bool;
}

/// A timer that fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiredTimer {
    pub key: u32,
    pub time: i64,
    pub name: Option<std::sync::Arc<str>>,
}

/// Timers to fire, in order.
pub struct TimerCall<'a> {
    pub timers: &'a [FiredTimer],
    /// The watermark that made them fire.
    pub watermark: Option<i64>,
    /// Processing time (ms), for state TTL.
    pub now: i64,
    /// The timer being fired, kept up to date so an error or panic can name it.
    pub row: usize,
    /// Emitted rows are handed to `sink` once this many have gathered; a row's owner is its
    /// timer's index.
    pub chunk: usize,
    pub sink: &'a mut dyn RowSink,
    pub service: &'a mut dyn Timers,
    /// Keys whose state became empty.
    pub released: &'a mut Vec<u32>,
}

/// A timer service for calls that can have no timers.
pub struct NoTimers;

impl Timers for NoTimers {
    fn apply(&mut self, _key: u32, requests: &mut Vec<TimerRequest>) {
        requests.clear();
    }

    fn take(&mut self, _index: usize) -> bool {
        false
    }
}
