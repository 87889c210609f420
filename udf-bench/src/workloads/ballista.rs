//! `scalar`, `agg` and `ptf_counter` on a Ballista cluster (a scheduler and two executors on
//! this machine, started by the benchmark), each measured against the same workload on the
//! local session.

use super::Workload;
use super::aggregate::AGG;
use super::ptf::PTF_COUNTER;
use super::scalar::SCALAR;

pub const SCALAR_BALLISTA: Workload = Workload {
    name: "scalar_ballista",
    baseline: Some("scalar"),
    cluster: true,
    ..SCALAR
};

pub const AGG_BALLISTA: Workload = Workload {
    name: "agg_ballista",
    baseline: Some("agg"),
    cluster: true,
    ..AGG
};

pub const PTF_COUNTER_BALLISTA: Workload = Workload {
    name: "ptf_counter_ballista",
    baseline: Some("ptf_counter"),
    cluster: true,
    ..PTF_COUNTER
};
