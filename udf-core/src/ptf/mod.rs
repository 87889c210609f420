//! Process table functions (PTFs): user-defined operators over tables, with keyed state.
//!
//! `#[ptf]` implements [`ProcessTableFunction`] and [`ProcessBody`] for the user's function;
//! the row loop and the timer protocol are [`process`] and [`fire`], written once
//! (`run.rs`). What a call receives is in `call.rs`, the state stores in `state/`.

mod call;
mod clock;
mod context;
mod function;
mod run;
mod state;
mod timers;

pub use call::{
    Emission, Firing, Position, ProcessCall, Rows, TableWatermarks, TimerCall, WatermarkTrace,
};
pub use clock::{ManualClock, ProcessingClock, SystemClock};
pub use context::{CallInfo, Context, OnTimerContext, TableSemantics, TimeContext};
pub use function::{ProcessTableFunction, Processor, ProcessorSetup};
pub use run::{BodyProcessor, ProcessBody, fire, process};
pub(crate) use state::decode;
pub use state::{
    EntryStore, ItemStore, KeyedView, ListElements, ListView, MapEntries, MapView, NoState,
    SavedView, StateBackend, StateItem, StateKey, StateStores, StateValue, StoredItem, StoredViews,
    ValueSlot, ValueStates, ValueStore, ViewSlot, ViewStates, ViewStore, save_items,
};
pub use timers::{FiredTimer, NoTimers, TimerRequest, TimerRequests, Timers};
