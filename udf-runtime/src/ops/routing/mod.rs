//! Routing the rows of a keyed operator's inputs to its processors — process table functions,
//! window aggregates, OVER windows over streams, and under checkpoints the updating GROUP BY
//! and table aggregates: by a hash of the keys (`router.rs`), each row with the watermark in
//! force before it, derived per input partition (`source_watermark.rs`) and combined by
//! minimum; rows held back while a processor is behind (`gate.rs`); checkpoint barriers
//! aligned across input partitions (`align.rs`); what a processor receives (`routed.rs`).
//! On a cluster the routes and watermarks are stamped on the rows before the cluster's
//! shuffle and taken off after it (`shuffle/`).

mod align;
mod gate;
pub(crate) mod routed;
pub(crate) mod router;
pub mod shuffle;
pub(crate) mod source_watermark;
