//! `HashFunction` from "Scalar Functions": takes an argument of any type.

use udf_core::prelude::*;

use crate::java;

/// Java's `hashCode` of the argument, whatever its type.
#[scalar_function(name = "HashFunction")]
pub fn hash_function(o: Value) -> i32 {
    java::hash_code(&o)
}
