//! Scalar, async scalar and aggregate functions as DataFusion's own function traits, and what
//! every kind shares: overload resolution, argument coercion, error texts, `open`/`close`.

pub mod aggregate;
pub mod arguments;
pub mod async_scalar;
pub mod binding;
pub mod errors;
pub mod identity;
pub mod lifecycle;
pub mod registration;
pub mod resolve;
pub mod scalar;
