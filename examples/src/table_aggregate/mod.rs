//! Table aggregate functions from the "User-defined Functions" guide and the API digest.

pub mod top2;
pub mod top2_with_retract;
pub mod top_n;

use udf_core::prelude::*;

/// A value and its rank (the guide's `Tuple2<Integer, Integer>`, with field names).
#[derive(Clone, Debug, PartialEq, SqlRow)]
pub struct Ranked {
    pub value: i32,
    pub rank: i32,
}
