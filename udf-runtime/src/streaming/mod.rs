//! What stateful operators over (possibly unbounded) input share: event time and watermarks
//! declared per table, time attributes traced through plans, key slots, the timer service,
//! the ORDER BY sort buffer, and the keyed-state unit that holds them per processor.

pub mod event_time;
pub mod keys;
pub mod local_time;
pub mod sort_buffer;
pub mod state;
pub mod time_attribute;
pub mod timers;
pub mod watermarks;
