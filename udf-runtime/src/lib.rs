//! Runs user-defined functions inside Apache DataFusion.
//!
//! A [`Session`] is an embedded SQL engine: register functions written with `udf-core`'s
//! macros, then query tables, Parquet/CSV/JSON files or in-memory batches with SQL or the
//! DataFrame API. No server is involved.

mod arguments;
mod catalog;
mod dataframe;
mod errors;
mod feed;
mod ptf;
mod resolve;
mod session;
mod sql;
mod table_aggregate;

pub use catalog::FunctionInfo;
pub use dataframe::{
    FlatAggregate, GroupedDataFrame, JoinLateral, PartitionedDataFrame, Process, ProcessTableCall,
};
pub use feed::Feed;
pub use ptf::time::WatermarkEmission;
pub use session::Session;
pub use sql::config::JobParameters;
pub use sql::lateral::TableFunctionCall;
pub use sql::table_aggregate::TableAggregateCall;

/// DataFusion, as this crate uses it.
pub use datafusion;

/// `use udf_runtime::prelude::*;` — the session plus DataFusion's prelude.
pub mod prelude {
    pub use crate::{FlatAggregate, JoinLateral, Process, Session};
    pub use datafusion::prelude::*;
}
