//! PTF state on disk (`state.backend.type = 'fjall'`): the keyed count with every key fitting
//! the memory budget, with ten million keys and a budget for a tenth of them, and the
//! "Large State" shape — a `MapView` per key with a get and a put per row.

use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;

use super::Workload;
use super::ptf::{PTF_COUNTER, register_counter};

fn on_disk(session: &Session, budget: &str) -> Result<()> {
    session.set_option("state.backend.type", "fjall")?;
    session.set_option("state.backend.fjall.memory-budget", budget)
}

fn counter_on_disk(session: &Session) -> Result<()> {
    register_counter(session)?;
    on_disk(session, "64 mb")
}

/// `ptf_counter` (10,000 keys) with its state on disk: every key fits the budget.
pub const PTF_COUNTER_DISK: Workload = Workload {
    name: "ptf_counter_disk",
    setup: counter_on_disk,
    baseline: Some("ptf_counter"),
    ..PTF_COUNTER
};

fn counter_on_disk_small(session: &Session) -> Result<()> {
    register_counter(session)?;
    // A tenth of the ten million keys, at the 256 bytes a resident key is counted as.
    on_disk(session, "256 mb")
}

/// Ten million keys, each seen twice (20M rows), all in memory: what the disk backend's
/// run of the same input is measured against.
pub const PTF_COUNTER_10M: Workload = Workload {
    name: "ptf_counter_10m",
    sql: "SELECT * FROM counter(input => TABLE (SELECT id % 10000000 AS k, id FROM src) PARTITION BY k)",
    setup: register_counter,
    baseline: None,
    rows: Some(20_000_000),
    ..PTF_COUNTER
};

/// Ten million keys, each seen twice (20M rows), with room in memory for a tenth of them.
pub const PTF_COUNTER_DISK_10M: Workload = Workload {
    name: "ptf_counter_disk_10m",
    setup: counter_on_disk_small,
    baseline: Some("ptf_counter_10m"),
    ..PTF_COUNTER_10M
};

/// Counts each event per key (the seed's HistoryFunction): one `MapView` get and put per row.
#[ptf]
fn event_history(
    #[state] seen: &mut MapView<String, i64>,
    #[argument(set_semantic_table)] input: Event,
    out: &mut Collector<i64>,
) {
    let count = seen.get(input.event.as_str()).copied().unwrap_or(0) + 1;
    seen.put(input.event, count);
    out.collect(count);
}

#[derive(Clone, Debug, SqlRow)]
struct Event {
    k: i64,
    event: String,
}

fn register_history(session: &Session) -> Result<()> {
    session.register(event_history)
}

fn history_on_disk(session: &Session) -> Result<()> {
    register_history(session)?;
    on_disk(session, "64 mb")
}

/// 10,000 keys × 1,000 events each, all in memory: what the disk backend's run of the same
/// input is measured against.
pub const PTF_MAPVIEW: Workload = Workload {
    name: "ptf_mapview",
    sql: "SELECT * FROM event_history(input => TABLE (SELECT id % 10000 AS k, CONCAT('e', CAST((id / 10000) % 1000 AS VARCHAR)) AS event FROM src) PARTITION BY k)",
    setup: register_history,
    ..Workload::PLAIN
};

/// 10,000 keys × 1,000 events each, with the map entries on disk.
pub const PTF_MAPVIEW_DISK: Workload = Workload {
    name: "ptf_mapview_disk",
    setup: history_on_disk,
    baseline: Some("ptf_mapview"),
    ..PTF_MAPVIEW
};
