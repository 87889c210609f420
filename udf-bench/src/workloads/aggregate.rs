//! A weighted average as a user-defined aggregate against the same arithmetic in built-in
//! aggregates, grouped into 1000 groups; and over a stream, as an updating GROUP BY.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;
use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;

use super::{Workload, no_functions};
use crate::fed::Shape;

#[derive(Clone, Default, Serialize, Deserialize)]
struct WeightedSum {
    sum: i64,
    weight: i64,
}

/// `SUM(v * w) / SUM(w)` in integer arithmetic, as one aggregate.
#[derive(Clone)]
struct WeightedAverage;

#[aggregate_function(name = "wavg", merge)]
impl WeightedAverage {
    fn accumulate(acc: &mut WeightedSum, v: i64, w: i64) {
        acc.sum = acc.sum.wrapping_add(v.wrapping_mul(w));
        acc.weight = acc.weight.wrapping_add(w);
    }

    fn merge(acc: &mut WeightedSum, other: &WeightedSum) {
        acc.sum = acc.sum.wrapping_add(other.sum);
        acc.weight = acc.weight.wrapping_add(other.weight);
    }

    fn get_value(acc: &WeightedSum) -> Option<i64> {
        (acc.weight != 0).then(|| acc.sum / acc.weight)
    }
}

pub(super) fn register_wavg(session: &Session) -> Result<()> {
    session.register(WeightedAverage)
}

fn thousand_groups(rows: u64) -> u64 {
    rows.min(1000)
}

pub const AGG: Workload = Workload {
    name: "agg",
    sql: "SELECT k, wavg(v, w) FROM (SELECT id % 1000 AS k, id AS v, id % 7 + 1 AS w FROM src) GROUP BY k",
    setup: register_wavg,
    baseline: Some("agg_builtin"),
    expected_rows: thousand_groups,
    ..Workload::PLAIN
};

pub const AGG_BUILTIN: Workload = Workload {
    name: "agg_builtin",
    sql: "SELECT k, SUM(v * w) / SUM(w) FROM (SELECT id % 1000 AS k, id AS v, id % 7 + 1 AS w FROM src) GROUP BY k",
    setup: no_functions,
    baseline: None,
    expected_rows: thousand_groups,
    ..Workload::PLAIN
};

/// `agg` over an unbounded feed of the same ids: the updating GROUP BY, emitting `+I` for a
/// key's first row and `-U`/`+U` whenever a row changes its key's average.
pub const AGG_STREAM: Workload = Workload {
    name: "agg_stream",
    sql: "SELECT k, wavg(v, w) FROM (SELECT id % 1000 AS k, id AS v, id % 7 + 1 AS w FROM fed) GROUP BY k",
    setup: register_wavg,
    baseline: Some("agg"),
    // A row that leaves its key's average as it was emits nothing.
    check_rows: false,
    fed: Some(("fed", Shape::Ids)),
    ..Workload::PLAIN
};

/// `agg_stream` over a million keys (ten rows each), in memory: what the disk backend's run
/// of the same input is measured against.
pub const AGG_STREAM_1M: Workload = Workload {
    name: "agg_stream_1m",
    sql: "SELECT k, wavg(v, w) FROM (SELECT id % 1000000 AS k, id AS v, id % 7 + 1 AS w FROM fed) GROUP BY k",
    baseline: None,
    ..AGG_STREAM
};

fn wavg_on_disk(session: &Session) -> Result<()> {
    register_wavg(session)?;
    session.set_option("state.backend.type", "fjall")?;
    // About a tenth of the million groups fits.
    session.set_option("state.backend.fjall.memory-budget", "8 mb")
}

/// `agg_stream_1m` with its groups on disk, the budget holding about a tenth of them.
pub const AGG_STREAM_DISK_1M: Workload = Workload {
    name: "agg_stream_disk_1m",
    setup: wavg_on_disk,
    baseline: Some("agg_stream_1m"),
    ..AGG_STREAM_1M
};

fn register_keyed_wavg(session: &Session) -> Result<()> {
    super::ptf::register_keyed_times(session, udf_runtime::WatermarkEmission::EveryBatch)?;
    register_wavg(session)
}

/// `wavg` per key per 10 s tumbling window over `ptf_timer`'s event-time input (`keyed`:
/// 10,000 keys, one row per key per window), emitted as the watermark passes each window.
pub const TUMBLE_AGG: Workload = Workload {
    name: "tumble_agg",
    sql: "SELECT window_start, window_end, k, wavg(id, id % 7 + 1) FROM TABLE(TUMBLE(TABLE keyed, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k",
    setup: register_keyed_wavg,
    baseline: Some("agg"),
    // Rows behind the watermark of another input partition are late and dropped.
    check_rows: false,
    ..Workload::PLAIN
};

/// The view `keyed_1m(k, id, ts)` over `src`: a million keys, `ts` is `id / 100`
/// milliseconds (a 10 s window holds a million rows, every key once), watermark `ts - 1 s`.
fn register_million_keyed_wavg(session: &Session) -> Result<()> {
    futures::executor::block_on(async {
        session
            .sql("CREATE VIEW keyed_1m AS SELECT id % 1000000 AS k, id, to_timestamp_millis(id / 100) AS ts FROM src")
            .await?
            .collect()
            .await
    })?;
    session.declare_watermark("keyed_1m", "ts", std::time::Duration::from_secs(1));
    register_wavg(session)
}

/// `tumble_agg` over a million keys, every one in every window, in memory: what the disk
/// backend's run of the same input is measured against.
pub const TUMBLE_AGG_1M: Workload = Workload {
    name: "tumble_agg_1m",
    sql: "SELECT window_start, window_end, k, wavg(id, id % 7 + 1) FROM TABLE(TUMBLE(TABLE keyed_1m, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k",
    setup: register_million_keyed_wavg,
    baseline: None,
    ..TUMBLE_AGG
};

fn million_keyed_wavg_on_disk(session: &Session) -> Result<()> {
    register_million_keyed_wavg(session)?;
    session.set_option("state.backend.type", "fjall")?;
    // About a tenth of a window's million groups fits.
    session.set_option("state.backend.fjall.memory-budget", "8 mb")
}

/// `tumble_agg_1m` with the groups of its open windows on disk beyond a budget that holds
/// about a tenth of a window's: most groups are written out while their window is open and
/// read back by one scan when it fires.
pub const TUMBLE_AGG_DISK_1M: Workload = Workload {
    name: "tumble_agg_disk_1m",
    setup: million_keyed_wavg_on_disk,
    baseline: Some("tumble_agg_1m"),
    ..TUMBLE_AGG_1M
};

/// `wavg` per session of a key over `keyed_1m` (every key once in 10 s, sessions closed 5 s
/// after a key's row: each row a session of its own, half a million open at a time), in
/// memory: what the disk backend's run is measured against.
pub const SESSION_AGG_1M: Workload = Workload {
    name: "session_agg_1m",
    sql: "SELECT window_start, window_end, k, wavg(id, id % 7 + 1) FROM TABLE(SESSION(TABLE keyed_1m PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k",
    ..TUMBLE_AGG_1M
};

/// `session_agg_1m` with the open sessions of keys beyond the budget on disk (`8 mb`): they
/// go out to the store between a key's rows and close from it as the watermark passes.
pub const SESSION_AGG_DISK_1M: Workload = Workload {
    name: "session_agg_disk_1m",
    setup: million_keyed_wavg_on_disk,
    baseline: Some("session_agg_1m"),
    ..SESSION_AGG_1M
};

/// A sum over each key's last 15 s of event time over a fed `fed(k, id, ts)` of a million
/// keys (`ts` is `id` milliseconds: a row of each key every 1,000 s, so each frame holds the
/// row before until the next comes), every row out once the watermark passes it, in memory:
/// what the disk backend's run is measured against.
pub const OVER_1M: Workload = Workload {
    name: "over_1m",
    sql: "SELECT k, id, SUM(id) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '15' SECOND PRECEDING AND CURRENT ROW) FROM fed",
    setup: no_functions,
    baseline: None,
    check_rows: false,
    fed: Some(("fed", Shape::KeyedTimes { keys: 1_000_000 })),
    ..Workload::PLAIN
};

fn on_disk(session: &Session) -> Result<()> {
    session.set_option("state.backend.type", "fjall")?;
    session.set_option("state.backend.fjall.memory-budget", "8 mb")
}

/// `over_1m` with the keys beyond the budget (`8 mb`) on disk with their frames.
pub const OVER_DISK_1M: Workload = Workload {
    name: "over_disk_1m",
    setup: on_disk,
    baseline: Some("over_1m"),
    ..OVER_1M
};
