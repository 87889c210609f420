//! Process table functions: the SQL call and its binding (`binding.rs`), the DataFrame form
//! (`dataframe.rs`), the resolved call (`call.rs`), the logical node (`node.rs`) and the exec
//! (`exec.rs`) over one input per table argument (`input.rs`): one virtual processor per
//! output partition (`driver/`), rows routed to them by a hash of the PARTITION BY keys with
//! their watermarks (`ops/routing/`), output rows assembled from their origins
//! (`output.rs`); a harness driving one processor from a plain test (`harness.rs`).

pub mod binding;
pub mod call;
mod dataframe;
mod disk_run;
mod driver;
#[cfg(test)]
mod driver_tests;
pub mod exec;
mod harness;
pub mod input;
mod instance;
pub mod node;
mod output;

pub use dataframe::{PartitionedDataFrame, Process, ProcessTableCall};
pub use harness::{FiredTimer, PtfHarness, PtfHarnessBuilder};
pub use node::PtfNode;
