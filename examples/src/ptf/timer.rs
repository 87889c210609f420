//! `TimerFunction` from "Timers": waits for a second event per key, or reports a timeout
//! 60 seconds (event time) after the first.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

/// `SeenState`: the first event of the key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeenState {
    pub seen: Option<String>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct TimerFunction;

#[ptf(name = "TimerFunction")]
impl TimerFunction {
    fn eval(
        &self,
        ctx: &mut Context,
        #[state] memory: &mut SeenState,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<String>,
    ) {
        match &memory.seen {
            None => {
                memory.seen = Some(input.get(0).map(ToString::to_string).unwrap_or_default());
                let mut time = ctx.time_context();
                if let Some(now) = time.time() {
                    time.register_on_time("timeout", now + chrono::Duration::seconds(60));
                }
            }
            Some(seen) => {
                out.collect(format!("Second event arrived for: {seen}"));
                ctx.clear_all();
            }
        }
    }

    fn on_timer(&self, #[state] memory: &mut SeenState, out: &mut Collector<String>) {
        out.collect(format!(
            "Timeout for: {}",
            memory.seen.as_deref().unwrap_or("null")
        ));
    }
}
