//! OVER windows over a stream, ordered by a time attribute: the node and its checks
//! (`node.rs`), the exec (`exec.rs`) and one processor's waiting rows and frames
//! (`frames.rs`), whose keys and kept rows a checkpoint saves (`snapshot.rs`). Over bounded input DataFusion's own window operator runs them.

pub mod exec;
mod frames;
pub mod node;
mod snapshot;

pub use exec::EventTimeOverExec;
pub use node::EventTimeOverNode;
