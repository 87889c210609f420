//! `HistoryFunction` from "Large State": per-user event counts in a `MapView`, reporting an
//! event seen more than 1000 times.

use udf_core::prelude::*;

#[ptf(name = "HistoryFunction")]
pub fn history_function(
    #[state] large_memory: &mut MapView<String, i32>,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<String>,
) -> Result<()> {
    let Some(event_id) = input.field("eventId").and_then(Value::as_str) else {
        bail!("the table needs a STRING column `eventId`");
    };
    match large_memory.get(event_id).copied() {
        None => {
            large_memory.put(event_id.to_owned(), 1);
        }
        Some(count) => {
            if count > 1000 {
                out.collect(format!("Anomaly detected: {event_id}"));
            }
            large_memory.put(event_id.to_owned(), count + 1);
        }
    }
    Ok(())
}
