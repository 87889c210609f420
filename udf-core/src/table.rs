//! The vectorized contract of a table function, implemented by `#[table_function]`.
//!
//! A call evaluates a batch of input rows. Emitted rows go into Arrow builders and are handed
//! to a [`RowSink`] in chunks, each row with the input row that emitted it, so the runtime can
//! join them to the input without boxing anything per row. A call pauses after a chunk when
//! the sink is full and is resumed where it stopped: what one input batch emits is never held
//! all at once.

use arrow::array::ArrayRef;

use crate::Error;
use crate::collector::{Emitted, Owners};
use crate::context::FunctionContext;
use crate::convert::ResultValue;
use crate::scalar::ArgColumn;
use crate::spec::FunctionSpec;
use crate::types::DataType;

/// A table function in its vectorized form.
pub trait TableFunction: Send + Sync + 'static {
    /// Signatures, names and properties. Called once when the function is registered.
    fn spec(&self) -> FunctionSpec;

    /// A fresh, unopened copy for one query, if the function has `open`/`close`.
    fn instantiate(&self) -> Option<Box<dyn TableFunction>> {
        None
    }

    /// Runs once per instance before the first call.
    fn open(&mut self, _context: &FunctionContext) -> Result<(), Error> {
        Ok(())
    }

    /// Runs once per instance after the last call.
    fn close(&mut self) {}

    /// Evaluates every row of `call` with signature `call.signature`.
    fn invoke(&self, call: &mut TableCall<'_>) -> Result<(), Error>;
}

/// One batch of input rows to evaluate.
pub struct TableCall<'a> {
    /// Index into [`FunctionSpec::signatures`].
    pub signature: usize,
    /// One column per argument, already of the parameter types.
    pub args: &'a [ArgColumn],
    pub rows: usize,
    /// The type of the emitted rows, decided at planning.
    pub output: &'a DataType,
    /// The first row to evaluate (after the row a paused call stopped at).
    pub start: usize,
    /// The row being evaluated, kept up to date so an error or panic can name it.
    pub row: usize,
    /// Emitted rows are handed to `sink` once this many have gathered.
    pub chunk: usize,
    pub sink: &'a mut dyn RowSink,
    /// Set by a call that stopped early because the sink was full: the row the next call
    /// starts at.
    pub paused_at: Option<usize>,
}

/// Receives the rows a table function emits.
pub trait RowSink {
    /// `rows` is one column of the row type; `owners.get(i)` is the input row that emitted
    /// row `i`. Owners never decrease, within a chunk or from one chunk to the next.
    fn accept(&mut self, rows: ArrayRef, owners: Owners) -> Result<(), Error>;

    /// Whether the call should pause after the chunk just handed over (rows are waiting to
    /// be taken downstream). Calls pause only between input rows.
    fn is_full(&self) -> bool {
        false
    }
}

/// Hands the rows gathered in `emitted` to `sink`, if there are any.
pub fn hand_over<T: ResultValue>(
    emitted: &mut Emitted<T>,
    sink: &mut dyn RowSink,
) -> Result<(), Error> {
    if emitted.is_empty() {
        return Ok(());
    }
    let (rows, owners) = emitted.finish_rows()?;
    sink.accept(rows, owners)
}
