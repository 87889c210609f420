//! Group keys in aggregate errors. DataFusion's `GroupsAccumulator` sees group numbers, never
//! the keys, so a failing `get_value` or `merge` could name no group. A physical optimizer
//! rule (`rule.rs`) appends the GROUP BY keys to the arguments of each call of ours
//! (`udf.rs`), whose accumulators keep the key of each group beside it (`store.rs`): one
//! `take` per batch that creates groups. A partial aggregation passes the keys on as extra
//! state columns, so the final aggregation has them too.

mod rule;
mod store;
mod udf;

use std::any::Any;
use std::sync::Arc;

use datafusion::logical_expr::AggregateUDF;

pub use rule::GroupKeysForErrors;
pub(super) use store::GroupKeys;

use super::capabilities::ours;
use udf::KeyedAggregateUdf;

/// How many GROUP BY keys `udaf` takes after its arguments: `Some` for a call the rule
/// rewrote, which a plan codec must rebuild the same way.
pub fn group_key_count(udaf: &AggregateUDF) -> Option<usize> {
    (udaf.inner().as_ref() as &dyn Any)
        .downcast_ref::<KeyedAggregateUdf>()
        .map(KeyedAggregateUdf::keys)
}

/// `udaf` (one of ours) taking `keys` GROUP BY keys after its arguments, as the rule makes it.
pub fn with_group_keys(udaf: &AggregateUDF, keys: usize) -> Option<AggregateUDF> {
    let function = ours(udaf)?;
    Some(AggregateUDF::new_from_impl(KeyedAggregateUdf::new(
        Arc::new(function.clone()),
        keys,
    )))
}
