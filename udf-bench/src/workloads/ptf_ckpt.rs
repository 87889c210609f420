//! Checkpoints: `ptf_counter` and `ptf_timer` over a fed table (the source checkpoints read)
//! with a checkpoint every second, next to the same without checkpoints; the keyed count at a
//! million keys for a checkpoint's duration and size; and the restore of a million keys
//! (`ptf_restore_1m`, which prints its own line).

use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;

use super::Workload;
use super::ptf::{PTF_COUNTER, register_counter};
use crate::fed::Shape;

fn checkpoints_every_second(session: &Session) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("udf-bench-checkpoints-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    session.set_option("execution.checkpointing.interval", "1 s")?;
    session.set_option(
        "execution.checkpointing.dir",
        dir.to_str().unwrap_or_default(),
    )
}

fn counter_checkpointed(session: &Session) -> Result<()> {
    register_counter(session)?;
    checkpoints_every_second(session)
}

/// `ptf_counter` (10,000 keys) over `fed(id)`, without checkpoints.
pub const PTF_COUNTER_FED: Workload = Workload {
    name: "ptf_counter_fed",
    sql: "SELECT * FROM counter(input => TABLE (SELECT id % 10000 AS k, id FROM fed) PARTITION BY k, uid => 'counter')",
    fed: Some(("fed", Shape::Ids)),
    baseline: None,
    ..PTF_COUNTER
};

/// `ptf_counter_fed` with a checkpoint every second (and the final one).
pub const PTF_COUNTER_CKPT: Workload = Workload {
    name: "ptf_counter_ckpt",
    setup: counter_checkpointed,
    baseline: Some("ptf_counter_fed"),
    checkpointed: Some("counter"),
    ..PTF_COUNTER_FED
};

/// A million keys over `fed(id)`, without checkpoints.
pub const PTF_COUNTER_FED_1M: Workload = Workload {
    name: "ptf_counter_fed_1m",
    sql: "SELECT * FROM counter(input => TABLE (SELECT id % 1000000 AS k, id FROM fed) PARTITION BY k, uid => 'counter')",
    ..PTF_COUNTER_FED
};

/// `ptf_counter_fed_1m` with a checkpoint every second: each saves a million keys.
pub const PTF_COUNTER_CKPT_1M: Workload = Workload {
    name: "ptf_counter_ckpt_1m",
    setup: counter_checkpointed,
    baseline: Some("ptf_counter_fed_1m"),
    checkpointed: Some("counter"),
    ..PTF_COUNTER_FED_1M
};

fn timeouts_checkpointed(session: &Session) -> Result<()> {
    super::ptf::register_plain_timeouts(session)?;
    checkpoints_every_second(session)
}

/// `ptf_timer` over `fed(k, id, ts)`, without checkpoints.
pub const PTF_TIMER_FED: Workload = Workload {
    name: "ptf_timer_fed",
    sql: "SELECT * FROM timeouts(input => TABLE fed PARTITION BY k, on_time => DESCRIPTOR(ts), uid => 'timer')",
    setup: super::ptf::register_plain_timeouts,
    fed: Some(("fed", Shape::KeyedTimes { keys: 10_000 })),
    check_rows: false,
    ..Workload::PLAIN
};

/// `ptf_timer_fed` with a checkpoint every second: state, timers and watermarks.
pub const PTF_TIMER_CKPT: Workload = Workload {
    name: "ptf_timer_ckpt",
    setup: timeouts_checkpointed,
    baseline: Some("ptf_timer_fed"),
    checkpointed: Some("timer"),
    ..PTF_TIMER_FED
};

/// The restore of a million keys (see `fed::restore`).
pub const PTF_RESTORE_1M: Workload = Workload {
    name: "ptf_restore_1m",
    restore_keys: Some(1_000_000),
    ..Workload::PLAIN
};
