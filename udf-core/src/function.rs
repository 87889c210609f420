//! A function of any kind, as handed to a runtime for registration.

use std::sync::Arc;

use crate::aggregate::AggregateFunction;
use crate::asynchronous::{AsyncScalarFunction, AsyncTableFunction};
use crate::ptf::ProcessTableFunction;
use crate::scalar::ScalarFunction;
use crate::spec::FunctionSpec;
use crate::table::TableFunction;
use crate::table_aggregate::TableAggregateFunction;

/// A user-defined function of one of the supported kinds.
#[non_exhaustive]
#[derive(Clone)]
pub enum Function {
    Scalar(Arc<dyn ScalarFunction>),
    AsyncScalar(Arc<dyn AsyncScalarFunction>),
    Table(Arc<dyn TableFunction>),
    AsyncTable(Arc<dyn AsyncTableFunction>),
    Aggregate(Arc<dyn AggregateFunction>),
    TableAggregate(Arc<dyn TableAggregateFunction>),
    Process(Arc<dyn ProcessTableFunction>),
}

impl Function {
    pub fn spec(&self) -> FunctionSpec {
        match self {
            Function::Scalar(f) => f.spec(),
            Function::AsyncScalar(f) => f.spec(),
            Function::Table(f) => f.spec(),
            Function::AsyncTable(f) => f.spec(),
            Function::Aggregate(f) => f.spec(),
            Function::TableAggregate(f) => f.spec(),
            Function::Process(f) => f.spec(),
        }
    }
}

/// Implemented by the function macros for the type they define: what `register` accepts.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a user-defined function",
    label = "not a function",
    note = "annotate a `fn` or an `impl` block with #[scalar_function] (or another function macro)"
)]
pub trait UserFunction {
    fn into_function(self) -> Function;

    /// This instance's settings: its fields serialized when its type implements
    /// `serde::Serialize` (the function macros fill this in), else `None`. A cluster compares
    /// them between the client and its executors.
    fn settings(&self) -> Option<Vec<u8>> {
        None
    }
}

impl UserFunction for Function {
    fn into_function(self) -> Function {
        self
    }
}
