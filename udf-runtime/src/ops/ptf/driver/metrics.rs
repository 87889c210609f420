//! What EXPLAIN ANALYZE shows of each processor.

use super::*;

/// What EXPLAIN ANALYZE shows of each processor.
pub(in crate::ops::ptf) struct ProcessorMetrics {
    pub(super) input_rows: Count,
    pub(super) output_rows: Count,
    /// State entries held after the latest batch.
    pub(super) state_entries: Gauge,
    /// Keys holding a state slot after the latest batch.
    pub(super) keys: Gauge,
    /// The most keys that held a slot at once.
    pub(super) keys_peak: Gauge,
    /// Timers registered after the latest batch.
    pub(super) timers: Gauge,
    /// Rows dropped by ORDER BY for arriving at or behind the watermark (rule 31 of docs/semantics.md).
    pub(super) late_rows_dropped: Count,
    /// Rows waiting in the ORDER BY buffer after the latest batch.
    pub(super) rows_waiting: Gauge,
    /// With the disk backend.
    pub(super) disk: Option<DiskMetrics>,
    pub(super) set: ExecutionPlanMetricsSet,
    pub(super) partition: usize,
}

/// What the disk backend moved and holds, per processor.
pub(super) struct DiskMetrics {
    /// Keys whose rows found their state in memory (per batch).
    pub(super) cache_hits: Gauge,
    /// Keys whose state was read back from disk.
    pub(super) cache_misses: Gauge,
    /// Keys whose state was moved out to disk.
    pub(super) evictions: Gauge,
    /// View item reads answered in memory.
    pub(super) item_hits: Gauge,
    /// View item reads that went to the store.
    pub(super) item_misses: Gauge,
    pub(super) bytes_read: Gauge,
    pub(super) bytes_written: Gauge,
    /// Entries in the processor's store (approximate until compaction).
    pub(super) entries_on_disk: Gauge,
    /// Bytes the processor's store takes on disk.
    pub(super) disk_bytes: Gauge,
}

impl ProcessorMetrics {
    pub(in crate::ops::ptf) fn new(set: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        ProcessorMetrics {
            input_rows: MetricBuilder::new(set).counter("input_rows", partition),
            output_rows: MetricBuilder::new(set).output_rows(partition),
            state_entries: MetricBuilder::new(set).gauge("state_entries", partition),
            keys: MetricBuilder::new(set).gauge("state_keys", partition),
            keys_peak: MetricBuilder::new(set).gauge("state_keys_peak", partition),
            timers: MetricBuilder::new(set).gauge("timers", partition),
            late_rows_dropped: MetricBuilder::new(set).counter("late_rows_dropped", partition),
            rows_waiting: MetricBuilder::new(set).gauge("rows_waiting", partition),
            disk: None,
            set: set.clone(),
            partition,
        }
    }

    /// Adds the disk backend's metrics.
    pub(super) fn with_disk(mut self) -> Self {
        let gauge = |name: &'static str| MetricBuilder::new(&self.set).gauge(name, self.partition);
        self.disk = Some(DiskMetrics {
            cache_hits: gauge("state_cache_hits"),
            cache_misses: gauge("state_cache_misses"),
            evictions: gauge("state_evictions"),
            item_hits: gauge("state_item_cache_hits"),
            item_misses: gauge("state_item_cache_misses"),
            bytes_read: gauge("state_bytes_read"),
            bytes_written: gauge("state_bytes_written"),
            entries_on_disk: gauge("state_entries_on_disk"),
            disk_bytes: gauge("state_disk_bytes"),
        });
        self
    }
}
