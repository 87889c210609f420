//! Process table functions (PTFs): user-defined operators over tables, with keyed state.

mod clock;
mod context;
mod function;
mod state;

pub use clock::{ManualClock, ProcessingClock, SystemClock};
pub use context::{CallInfo, Context, TableSemantics, TimeContext};
pub use function::{ProcessCall, ProcessTableFunction, Processor, ProcessorSetup};
pub use state::{
    KeyedView, ListView, MapView, StateBackend, StateItem, StateKey, StateValue, ValueStates,
    ValueStore, ViewStates, ViewStore,
};
