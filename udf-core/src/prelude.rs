//! `use udf_core::prelude::*;` — everything a function author needs.

pub use crate::{
    AggregateFunction, CallContext, DataType, Decimal, Error, FunctionContext, Result, Row,
    ScalarFunction, SqlRow, Value, aggregate_function, bail, scalar_function,
};
