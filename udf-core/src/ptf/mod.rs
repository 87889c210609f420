//! Process table functions (PTFs): user-defined operators over tables, with keyed state.

mod clock;
mod context;
mod function;
mod state;
mod timers;

pub use clock::{ManualClock, ProcessingClock, SystemClock};
pub use context::{CallInfo, Context, OnTimerContext, TableSemantics, TimeContext};
pub use function::{ProcessCall, ProcessTableFunction, Processor, ProcessorSetup};
pub use state::{
    KeyedView, ListView, MapView, StateBackend, StateItem, StateKey, StateValue, ValueSlot,
    ValueStates, ValueStore, ViewSlot, ViewStates, ViewStore,
};
pub use timers::{FiredTimer, NoTimers, TimerCall, TimerRequest, TimerRequests, Timers};
