//! Process table functions in DataFusion: the SQL call (`planner`), the logical node
//! (`node`), and the execution (`exec`): one virtual processor per output partition, rows
//! routed by a hash of the PARTITION BY keys, typed keyed state per processor.

pub mod call;
pub mod clock;
pub mod driver;
pub mod exec;
pub mod gate;
pub mod keys;
pub mod node;
pub mod output;
pub mod planner;
pub mod router;
pub mod sort_buffer;
pub mod time;
pub mod time_attribute;
pub mod timers;

pub use node::PtfNode;
