//! OVER windows over a stream, ordered by a time attribute: the node and its checks
//! (`node.rs`), the exec (`exec.rs`) and one processor's waiting rows and frames
//! (`frames.rs`), whose keys and kept rows a checkpoint saves (`snapshot.rs`); with the disk
//! backend the keys beyond the memory budget wait on disk (`on_disk.rs`; which stay in
//! memory: `residency.rs`). Over bounded input DataFusion's own window operator runs them.

pub mod exec;
mod frames;
pub mod node;
mod on_disk;
mod residency;
mod snapshot;

pub use exec::EventTimeOverExec;
pub use node::EventTimeOverNode;
