//! Group keys in aggregate errors. DataFusion's `GroupsAccumulator` sees group numbers, never
//! the keys, so a failing `get_value` or `merge` could name no group. A physical optimizer
//! rule (`rule.rs`) appends the GROUP BY keys to the arguments of each call of ours
//! (`udf.rs`), whose accumulators keep the key of each group beside it (`store.rs`): one
//! `take` per batch that creates groups. A partial aggregation passes the keys on as extra
//! state columns, so the final aggregation has them too.

mod rule;
mod store;
mod udf;

pub use rule::GroupKeysForErrors;
pub(super) use store::GroupKeys;
