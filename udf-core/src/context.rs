//! What a function sees of its environment when it is opened.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Passed to `open`: job parameters and metrics (Flink's `FunctionContext`).
#[derive(Clone, Debug, Default)]
pub struct FunctionContext {
    function: String,
    job_parameters: Arc<BTreeMap<String, String>>,
    metrics: Metrics,
}

impl FunctionContext {
    pub fn new(
        function: impl Into<String>,
        job_parameters: Arc<BTreeMap<String, String>>,
        metrics: Metrics,
    ) -> Self {
        FunctionContext {
            function: function.into(),
            job_parameters,
            metrics,
        }
    }

    /// The SQL name the function was called by.
    pub fn function_name(&self) -> &str {
        &self.function
    }

    /// The global job parameter `name`, or `default` when it is not set.
    pub fn get_job_parameter(&self, name: &str, default: &str) -> String {
        self.job_parameters
            .get(name)
            .map_or_else(|| default.to_owned(), Clone::clone)
    }

    /// Metrics scoped to this function: `counter("calls")` is reported as `<function>.calls`.
    pub fn metric_group(&self) -> MetricGroup {
        MetricGroup {
            scope: self.function.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

/// A session's metric registry: named counters.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    counters: Arc<Mutex<BTreeMap<String, Counter>>>,
}

impl Metrics {
    /// The counter `name`, created at zero on first use.
    pub fn counter(&self, name: &str) -> Counter {
        let mut counters = self
            .counters
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        counters.entry(name.to_owned()).or_default().clone()
    }

    /// Every counter with its current value, ordered by name.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        let counters = self
            .counters
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        counters.iter().map(|(k, v)| (k.clone(), v.get())).collect()
    }
}

/// The metrics of one function.
#[derive(Clone, Debug)]
pub struct MetricGroup {
    scope: String,
    metrics: Metrics,
}

impl MetricGroup {
    pub fn counter(&self, name: &str) -> Counter {
        self.metrics.counter(&format!("{}.{name}", self.scope))
    }
}

/// A monotonically increasing count, shared by every clone.
#[derive(Clone, Debug, Default)]
pub struct Counter(Arc<AtomicU64>);

impl Counter {
    pub fn inc(&self) {
        self.add(1)
    }

    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
