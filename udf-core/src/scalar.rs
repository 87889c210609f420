//! The vectorized contract of a scalar function, implemented by `#[scalar_function]`.

use arrow::array::{Array, ArrayRef};

use crate::context::FunctionContext;
use crate::spec::FunctionSpec;
use crate::types::DataType;
use crate::{Error, Value};

/// A scalar function in its vectorized form: whole Arrow columns in, one column out.
///
/// Written by `#[scalar_function]`; the runtime binds it to the SQL engine.
pub trait ScalarFunction: Send + Sync + 'static {
    /// Signatures, names and properties. Called once when the function is registered.
    fn spec(&self) -> FunctionSpec;

    /// A fresh, unopened copy for one query, if the function has `open`/`close`; functions
    /// without a lifecycle are shared by all queries as they are.
    fn instantiate(&self) -> Option<Box<dyn ScalarFunction>> {
        None
    }

    /// Runs once per instance before the first call.
    fn open(&mut self, _context: &FunctionContext) -> Result<(), Error> {
        Ok(())
    }

    /// Runs once per instance after the last call. It cannot fail the query, which has
    /// already produced its results; release resources here.
    fn close(&mut self) {}

    /// The result type of a call, for functions whose signatures declare
    /// [`OutputType::Custom`](crate::spec::OutputType::Custom).
    fn output_type(&self, call: &CallContext<'_>) -> Result<DataType, Error> {
        let _ = call;
        Err(Error::msg(
            "this function has no custom output type inference",
        ))
    }

    /// Evaluates `call.rows` rows of signature `call.signature`.
    fn invoke(&self, call: &mut ScalarCall<'_>) -> Result<ArrayRef, Error>;
}

/// One batch to evaluate.
pub struct ScalarCall<'a> {
    /// Index into [`FunctionSpec::signatures`].
    pub signature: usize,
    /// One column per argument (varargs included), already of the parameter types.
    pub args: &'a [ArgColumn],
    pub rows: usize,
    /// The result type decided at planning.
    pub output: &'a DataType,
    /// The row being evaluated, kept up to date so an error or panic can name it.
    pub row: usize,
    /// Take the row-by-row path even where a vectorized kernel exists (to locate a panic).
    pub traced: bool,
}

/// An argument column: an array of `rows` values, or one value for every row.
#[derive(Clone, Debug)]
pub struct ArgColumn {
    array: ArrayRef,
    scalar: bool,
}

impl ArgColumn {
    pub fn array(array: ArrayRef) -> Self {
        ArgColumn {
            array,
            scalar: false,
        }
    }

    /// A constant: `array` holds exactly one value, which stands for every row.
    pub fn scalar(array: ArrayRef) -> Self {
        debug_assert_eq!(array.len(), 1);
        ArgColumn {
            array,
            scalar: true,
        }
    }

    pub fn values(&self) -> &dyn Array {
        self.array.as_ref()
    }

    pub fn array_ref(&self) -> &ArrayRef {
        &self.array
    }

    pub fn is_scalar(&self) -> bool {
        self.scalar
    }

    /// `row & mask` is the index of row `row`'s value: constants read index 0 for every row
    /// without a branch.
    #[inline]
    pub fn index_mask(&self) -> usize {
        if self.scalar { 0 } else { usize::MAX }
    }

    /// Whether the value of `row` is NULL.
    #[inline]
    pub fn is_null(&self, row: usize) -> bool {
        self.array.is_null(row & self.index_mask())
    }
}

/// What custom output type inference sees of a call: argument types and literal values.
#[derive(Debug)]
pub struct CallContext<'a> {
    pub function: &'a str,
    /// Index of the signature the call resolved to.
    pub signature: usize,
    pub arg_types: &'a [DataType],
    /// `Some` for arguments given as literals (`Some(Value::Null)` for a NULL literal).
    pub literals: &'a [Option<Value>],
}

impl CallContext<'_> {
    /// Whether argument `index` is a literal.
    pub fn is_literal(&self, index: usize) -> bool {
        matches!(self.literals.get(index), Some(Some(_)))
    }

    /// Whether argument `index` is the literal NULL.
    pub fn is_null_literal(&self, index: usize) -> bool {
        matches!(self.literals.get(index), Some(Some(Value::Null)))
    }

    /// The literal value of argument `index`, if it is one.
    pub fn literal(&self, index: usize) -> Option<&Value> {
        self.literals.get(index).and_then(Option::as_ref)
    }

    /// The literal string of argument `index`, if it is a non-NULL string literal.
    pub fn literal_str(&self, index: usize) -> Option<&str> {
        match self.literal(index) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    /// An error for an invalid call, worded like the engine's own validation errors.
    pub fn validation_error(&self, message: impl std::fmt::Display) -> Error {
        Error::msg(format!("invalid call to `{}`: {message}", self.function))
    }
}
