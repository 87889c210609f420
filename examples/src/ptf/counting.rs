//! The `CountingFunction` variants of "State" and "Efficiency and Design Principles".

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

use crate::java::row_string;

/// `CountState`: the number of rows seen for the key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CountState {
    pub count: i64,
}

/// Counts rows per key and reports the running count.
#[ptf(name = "CountingFunction")]
pub fn counting_function(
    #[state] memory: &mut CountState,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<String>,
) {
    let _ = input;
    memory.count += 1;
    out.collect(format!("Seen rows: {}", memory.count));
}

/// `SeenState`: the first event of the key, as text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeenState {
    pub first: Option<String>,
}

/// Waits for a second event and reports both.
#[ptf(name = "SecondEventFunction")]
pub fn second_event_function(
    #[state] memory: &mut SeenState,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<String>,
) {
    match &memory.first {
        None => memory.first = Some(row_string(&input)),
        Some(first) => out.collect(format!(
            "Event 1: {first} and Event 2: {}",
            row_string(&input)
        )),
    }
}

/// The count kept in a `Row` state typed by a hint; absent state is a row of NULLs.
#[ptf(name = "RowCountingFunction")]
pub fn row_counting_function(
    #[state(type = "ROW<count BIGINT>")] memory: &mut Row,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<String>,
) {
    let _ = input;
    let new_count = 1 + memory.field("count").and_then(Value::as_i64).unwrap_or(0);
    memory.set_field("count", new_count);
    out.collect(format!("Seen rows: {new_count}"));
}

/// Waits for a second event, with state that expires after a day and is cleared once the
/// pair is complete.
#[ptf(name = "EfficientSecondEventFunction")]
pub fn efficient_second_event_function(
    ctx: &mut Context,
    #[state(ttl = "1 day")] memory: &mut SeenState,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<String>,
) {
    match &memory.first {
        None => memory.first = Some(row_string(&input)),
        Some(first) => {
            out.collect(format!(
                "Event 1: {first} and Event 2: {}",
                row_string(&input)
            ));
            ctx.clear_all_state();
        }
    }
}
