//! `use udf_core::prelude::*;` — everything a function author needs.

pub use crate::{
    CallContext, DataType, Decimal, Error, FunctionContext, Result, Row, ScalarFunction, SqlRow,
    Value, bail, scalar_function,
};
