//! `scalar`, `agg`, `ptf_counter` and `tumble_agg` on a Ballista cluster (a scheduler and two
//! executors on this machine, started by the benchmark), each measured against the same
//! workload on the local session; and each on the local session over the Parquet files the
//! cluster reads (`_files`), which tells what the files cost from what the cluster does.

use super::Workload;
use super::aggregate::{AGG, TUMBLE_AGG, register_wavg};
use super::ptf::{PTF_COUNTER, register_counter};
use super::scalar::{SCALAR, register_mix};

pub const SCALAR_BALLISTA: Workload = Workload {
    name: "scalar_ballista",
    baseline: Some("scalar"),
    cluster: Some(register_mix),
    ..SCALAR
};

pub const AGG_BALLISTA: Workload = Workload {
    name: "agg_ballista",
    baseline: Some("agg"),
    cluster: Some(register_wavg),
    ..AGG
};

pub const PTF_COUNTER_BALLISTA: Workload = Workload {
    name: "ptf_counter_ballista",
    baseline: Some("ptf_counter"),
    cluster: Some(register_counter),
    ..PTF_COUNTER
};

/// Window aggregates on a cluster: the rows stamped with their watermarks and shuffled by key.
pub const TUMBLE_AGG_BALLISTA: Workload = Workload {
    name: "tumble_agg_ballista",
    baseline: Some("tumble_agg"),
    cluster: Some(register_wavg),
    ..TUMBLE_AGG
};

pub const SCALAR_FILES: Workload = Workload {
    name: "scalar_files",
    baseline: Some("scalar"),
    files: true,
    ..SCALAR
};

pub const AGG_FILES: Workload = Workload {
    name: "agg_files",
    baseline: Some("agg"),
    files: true,
    ..AGG
};

pub const PTF_COUNTER_FILES: Workload = Workload {
    name: "ptf_counter_files",
    baseline: Some("ptf_counter"),
    files: true,
    ..PTF_COUNTER
};

pub const TUMBLE_AGG_FILES: Workload = Workload {
    name: "tumble_agg_files",
    baseline: Some("tumble_agg"),
    files: true,
    ..TUMBLE_AGG
};
