//! Aggregate functions in DataFusion: the `AggregateUDFImpl` (`udf.rs`), all groups'
//! accumulators in one vector for GROUP BY (`folder.rs`), one group for whole-input
//! aggregates and OVER windows (`single_group.rs`), DISTINCT (`distinct.rs`), and the
//! planning rules for what a function lacks: `retract` under bounded frames, `merge` for
//! partial aggregation (`capabilities.rs`, `one_phase.rs`); group keys for errors
//! (`group_keys/`).

pub mod capabilities;
mod distinct;
pub mod folder;
pub mod group_keys;
pub mod one_phase;
mod single_group;
pub mod udf;
