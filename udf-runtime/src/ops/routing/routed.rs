//! The messages a processor receives: rows of one input partition with their watermarks,
//! the end of a partition, and checkpoint barriers (one per source, then — aligned — one
//! checkpoint).

use datafusion::arrow::array::RecordBatch;

use crate::checkpoint::barrier::Barrier;

/// What a processor receives from one input partition.
#[derive(Debug)]
pub enum Routed {
    /// Rows for this processor (perhaps none), in their input order.
    Rows {
        source: usize,
        batch: RecordBatch,
        /// The row times (epoch ms), with event time.
        times: Option<Vec<i64>>,
        /// The source's watermark in force before each row, with event time.
        before: Option<Vec<Option<i64>>>,
        /// The source's watermark after the batch.
        after: Option<i64>,
        /// Processing time (ms) when the batch entered the operator: state TTL is measured
        /// on it.
        now: i64,
    },
    /// The input partition has no more rows: its watermark is +∞.
    End { source: usize },
    /// A checkpoint barrier from one source, after its rows before the checkpoint.
    Barrier { source: usize, barrier: Barrier },
    /// Every source's barrier has arrived (the inbox holds back what a source sent after
    /// its barrier until then): the processor saves its state.
    Checkpoint {
        barrier: Barrier,
        /// From the first of the barriers to the last.
        alignment: std::time::Duration,
    },
}

impl Routed {
    /// The source a message comes from (none for an aligned checkpoint).
    pub fn source(&self) -> Option<usize> {
        match self {
            Routed::Rows { source, .. }
            | Routed::End { source }
            | Routed::Barrier { source, .. } => Some(*source),
            Routed::Checkpoint { .. } => None,
        }
    }
}
