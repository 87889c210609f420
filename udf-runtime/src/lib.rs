//! Runs user-defined functions inside Apache DataFusion.
//!
//! A [`Session`] is an embedded SQL engine: register functions written with `udf-core`'s
//! macros, then query tables, Parquet/CSV/JSON files or in-memory batches with SQL or the
//! DataFrame API. No server is involved.
//!
//! The modules follow the architecture (`docs/architecture.md`): `session` is what an
//! application holds, `plan` turns SQL into plans, `functions` adapts scalar and aggregate
//! functions to DataFusion, `ops` holds the operators DataFusion lacks (one folder each, with
//! its logical node, exec and binding), and `streaming` the event-time machinery and the
//! keyed state of stateful operators.

/// The parts of `ExtensionOptions` that are the same for every option set of the session.
macro_rules! extension_options_basics {
    () => {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }

        fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
            self
        }

        fn cloned(&self) -> Box<dyn datafusion::common::config::ExtensionOptions> {
            Box::new(self.clone())
        }
    };
}

pub mod ballista;
pub mod changelog;
mod checkpoint;
mod functions;
mod ops;
mod plan;
mod session;
pub mod shell;
mod streaming;

#[cfg(test)]
mod layout_tests;

pub use checkpoint::jobs::CheckpointStats;
pub use ops::lateral::{JoinLateral, TableFunctionCall};
pub use ops::ptf::{
    FiredTimer, PartitionedDataFrame, Process, ProcessTableCall, PtfHarness, PtfHarnessBuilder,
};
pub use ops::table_aggregate::{FlatAggregate, GroupedDataFrame, TableAggregateCall};
pub use session::Session;
pub use session::catalog::FunctionInfo;
pub use session::checkpoints::Checkpoint;
pub use session::feed::{FEED_CAPACITY, Feed};
pub use session::job_parameters::JobParameters;
pub use streaming::event_time::WatermarkEmission;

/// DataFusion, as this crate uses it.
pub use datafusion;

/// `use udf_runtime::prelude::*;` — the session plus DataFusion's prelude.
pub mod prelude {
    pub use crate::{FlatAggregate, JoinLateral, Process, Session};
    pub use datafusion::prelude::*;
}
