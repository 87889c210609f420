//! Scalar functions from the "User-defined Functions" guide and the API digest.

pub mod complex_return;
pub mod configurable;
pub mod efficient_string;
pub mod hash;
pub mod hash_code;
pub mod literal;
pub mod my_concat;
pub mod named_parameters;
pub mod overloaded;
pub mod power;
pub mod resource;
pub mod string_hash;
pub mod substring;
pub mod sum;
