//! The contract user-defined functions are compiled against.
//!
//! Function authors write `use udf_core::prelude::*;` and annotate plain Rust with
//! `#[scalar_function]` (and, for row types, `#[derive(SqlRow)]`). The macros turn the Rust
//! signature into SQL signatures and Arrow-vectorized dispatch against the traits here;
//! `udf-runtime` executes the result inside a SQL engine.
//!
//! ```
//! use udf_core::prelude::*;
//!
//! /// `a * 31 + b`, wrapping like Java's `long`.
//! #[scalar_function]
//! fn mix(a: i64, b: i64) -> i64 {
//!     a.wrapping_mul(31).wrapping_add(b)
//! }
//!
//! let spec = ScalarFunction::spec(&mix);
//! assert_eq!(spec.signature_lines("mix"), ["mix(a BIGINT NOT NULL, b BIGINT NOT NULL) -> BIGINT NOT NULL"]);
//! assert_eq!(mix::eval(2, 3), 65);
//! ```

extern crate self as udf_core;

mod aggregate;
mod asynchronous;
mod collector;
mod context;
mod decimal;
mod describe;
mod error;
mod function;
mod group_failure;
mod kernel;
mod panics;
pub mod ptf;
mod scalar;
mod settings;
mod spec;
mod sql_row;
mod table;
mod table_aggregate;
mod value;

pub mod convert;
pub mod prelude;

#[doc(hidden)]
pub mod __private;

/// The SQL type system (Flink's logical types, their syntax and their Arrow mapping).
pub use udf_types as types;

pub use aggregate::{AggregateBatch, AggregateFunction, AggregateLogic, Emit, GroupAccumulators};
pub use asynchronous::{
    AsyncCall, AsyncFailure, AsyncOptions, AsyncRows, AsyncScalarFunction, AsyncTableFunction,
    BatchFuture, FailureReason, RetryStrategy,
};
pub use collector::{Collector, Emitted, Owners, RetractableCollector, RowKind};
pub use context::{Counter, FunctionContext, MetricGroup, Metrics};
pub use decimal::Decimal;
pub use error::{Error, Result, panic_message};
pub use function::{Function, UserFunction};
pub use group_failure::{Cause, GroupFailure};
pub use panics::{Panic, catch_user_panic, catch_user_panic_async};
pub use scalar::{ArgColumn, CallContext, ScalarCall, ScalarFunction};
pub use spec::{
    ArgSpec, ArgType, Capabilities, FunctionKind, FunctionSpec, OutputType, Semantics, Signature,
    StateKind, StateSpec, TableArg,
};
pub use sql_row::SqlRow;
pub use table::{RowSink, TableCall, TableFunction};
pub use table_aggregate::{Emits, TableAggregateFunction, TableAggregateLogic, TableGroups};
pub use types::DataType;
pub use value::{Row, Value};

pub use udf_macros::{
    SqlRow, aggregate_function, async_scalar_function, async_table_function, ptf, scalar_function,
    table_aggregate_function, table_function,
};

/// Arrow, as this crate sees it (one version for the whole program).
pub use arrow;
