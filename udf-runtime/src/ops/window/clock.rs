//! The clock a processor cuts windows on: the watermark — the minimum over its input
//! partitions — and row times, both read on the local wall clock for a TIMESTAMP_LTZ time
//! column under `table.local-time-zone` (on UTC otherwise).

use datafusion::common::{Result, exec_err};

use crate::streaming::local_time::LocalTime;
use crate::streaming::watermarks::SourceWatermarks;

pub(super) struct WindowClock {
    watermarks: SourceWatermarks,
    local: Option<LocalTime>,
}

impl WindowClock {
    pub(super) fn new(sources: usize, local: Option<LocalTime>) -> Self {
        WindowClock {
            watermarks: SourceWatermarks::new(sources),
            local,
        }
    }

    /// `source` reported `watermark` (UTC).
    pub(super) fn advance(&mut self, source: usize, watermark: i64) {
        self.watermarks.advance(source, watermark);
    }

    pub(super) fn watermarks(&self) -> &SourceWatermarks {
        &self.watermarks
    }

    /// Takes back the watermarks a checkpoint saved. Every processor saw the same ones at
    /// the checkpoint's barriers, so any saved processor's will do.
    pub(super) fn restore(&mut self, saved: &SourceWatermarks) -> Result<()> {
        if saved.sources() != self.watermarks.sources() {
            return exec_err!(
                "the saved windows were taken with {} input partitions, this window aggregate reads {}",
                saved.sources(),
                self.watermarks.sources()
            );
        }
        self.watermarks.advance_to(saved);
        Ok(())
    }

    /// `source` ended: its watermark is +∞.
    pub(super) fn end(&mut self, source: usize) {
        self.watermarks.end(source);
    }

    /// The watermark, once every input partition has reported one.
    pub(super) fn watermark(&self) -> Option<i64> {
        self.watermarks.current().map(|w| self.time(w))
    }

    /// A row time (UTC) on this clock.
    pub(super) fn time(&self, utc: i64) -> i64 {
        match &self.local {
            Some(local) => local.local(utc),
            None => utc,
        }
    }
}
