//! `use udf_core::prelude::*;` — everything a function author needs.

pub use crate::ptf::{
    Context, ListView, MapView, OnTimerContext, ProcessTableFunction, TableSemantics, TimeContext,
};
pub use crate::{
    AggregateFunction, AsyncScalarFunction, AsyncTableFunction, CallContext, Collector, DataType,
    Decimal, Error, FunctionContext, Result, RetractableCollector, Row, ScalarFunction, SqlRow,
    TableAggregateFunction, TableFunction, Value, aggregate_function, async_scalar_function,
    async_table_function, bail, ptf, scalar_function, table_aggregate_function, table_function,
};
