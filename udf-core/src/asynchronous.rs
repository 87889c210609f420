//! Async scalar and async table functions: a batch's calls run concurrently, bounded by
//! `max_concurrent_operations`, each within `timeout` (retries included) and retried per
//! the retry strategy; results are taken in input order whatever the completion order
//! (Flink's ordered async mode).
//!
//! Generated code drives [`run_in_order`] with the user's futures, so nothing is boxed per
//! call; only the batch's future is boxed.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use arrow::array::ArrayRef;
use std::collections::VecDeque;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use crate::Error;
use crate::context::FunctionContext;
use crate::scalar::ArgColumn;
use crate::spec::FunctionSpec;
use crate::table::RowSink;
use crate::types::DataType;

/// How calls are retried after an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryStrategy {
    /// The first error fails the query.
    NoRetry,
    /// Up to `max_attempts` calls in all, `delay` apart.
    FixedDelay {
        delay: Duration,
        max_attempts: usize,
    },
}

/// The execution options of async calls (Flink's `table.exec.async-scalar.*` and
/// `table.exec.async-table.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsyncOptions {
    /// Calls in flight at once.
    pub max_concurrent_operations: usize,
    /// Time allowed for one call, retries included.
    pub timeout: Duration,
    pub retry: RetryStrategy,
}

impl Default for AsyncOptions {
    /// Flink's defaults: 10 calls, 3 minutes, 3 attempts 100 ms apart.
    fn default() -> Self {
        AsyncOptions {
            max_concurrent_operations: 10,
            timeout: Duration::from_secs(180),
            retry: RetryStrategy::FixedDelay {
                delay: Duration::from_millis(100),
                max_attempts: 3,
            },
        }
    }
}

/// Why a call failed, and for which row (`None`: before any row was called).
#[derive(Debug)]
pub struct AsyncFailure {
    pub row: Option<usize>,
    pub reason: FailureReason,
}

impl AsyncFailure {
    /// A failure before the calls (reading the argument columns).
    pub fn setup(error: Error) -> AsyncFailure {
        AsyncFailure {
            row: None,
            reason: FailureReason::Conversion(error),
        }
    }
}

#[derive(Debug)]
pub enum FailureReason {
    /// The last attempt's error, after `attempts` attempts.
    Failed {
        error: Error,
        attempts: usize,
    },
    Panicked(String),
    TimedOut(Duration),
    /// Reading an argument or writing a result.
    Conversion(Error),
}

impl std::fmt::Display for FailureReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FailureReason::Failed { error, attempts: 1 } => write!(f, "failed: {error}"),
            FailureReason::Failed { error, attempts } => {
                write!(f, "failed after {attempts} attempts: {error}")
            }
            FailureReason::Panicked(message) => write!(f, "panicked: {message}"),
            FailureReason::TimedOut(timeout) => {
                write!(f, "timed out after {timeout:?} (retries included)")
            }
            FailureReason::Conversion(error) => write!(f, "failed: {error}"),
        }
    }
}

/// A finished call: its value (`None`: not called), or why it failed.
type Outcome<T> = Result<Option<T>, FailureReason>;

/// A batch future, borrowing the call.
pub type BatchFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AsyncFailure>> + Send + 'a>>;

/// One batch of rows to evaluate.
pub struct AsyncCall<'a> {
    /// Index into [`FunctionSpec::signatures`].
    pub signature: usize,
    /// One column per argument, already of the parameter types.
    pub args: &'a [ArgColumn],
    pub rows: usize,
    /// The result type (async scalar) or row type (async table), decided at planning.
    pub output: &'a DataType,
    pub options: AsyncOptions,
}

/// An async scalar function in its vectorized form, implemented by
/// `#[async_scalar_function]`.
pub trait AsyncScalarFunction: Send + Sync + 'static {
    fn spec(&self) -> FunctionSpec;

    /// A fresh, unopened copy for one query, if the function has `open`/`close`.
    fn instantiate(&self) -> Option<Box<dyn AsyncScalarFunction>> {
        None
    }

    fn open(&mut self, _context: &FunctionContext) -> Result<(), Error> {
        Ok(())
    }

    fn close(&mut self) {}

    /// The results of every row of `call`, in row order.
    fn invoke<'a>(&'a self, call: AsyncCall<'a>) -> BatchFuture<'a, ArrayRef>;
}

/// An async table function in its vectorized form, implemented by `#[async_table_function]`.
pub trait AsyncTableFunction: Send + Sync + 'static {
    fn spec(&self) -> FunctionSpec;

    fn instantiate(&self) -> Option<Box<dyn AsyncTableFunction>> {
        None
    }

    fn open(&mut self, _context: &FunctionContext) -> Result<(), Error> {
        Ok(())
    }

    fn close(&mut self) {}

    /// Hands the rows every row of `call` emits to `sink`, in row order, in chunks of
    /// `chunk` rows.
    fn invoke<'a>(
        &'a self,
        call: AsyncCall<'a>,
        chunk: usize,
        sink: &'a mut (dyn RowSink + Send),
    ) -> BatchFuture<'a, ()>;
}

/// Runs `call(row)` for every row, at most `options.max_concurrent_operations` at a time,
/// with timeout and retries, and passes the results to `accept` in row order.
///
/// `call` returns `None` for a row that is not called (NULL in a strict parameter); a
/// call may be made again for a retry.
pub async fn run_in_order<T, Call, Fut>(
    rows: usize,
    options: AsyncOptions,
    call: Call,
    mut accept: impl FnMut(usize, Option<T>) -> Result<(), Error>,
) -> Result<(), AsyncFailure>
where
    Call: Fn(usize) -> Result<Option<Fut>, Error>,
    Fut: Future<Output = Result<T, Error>>,
{
    let call = &call;
    let attempt_all = |row: usize| async move {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let future = match call(row) {
                Ok(Some(future)) => future,
                Ok(None) => return Ok(None),
                Err(error) => return Err(FailureReason::Conversion(error)),
            };
            match crate::catch_user_panic_async(future).await {
                Ok(Ok(value)) => return Ok(Some(value)),
                Ok(Err(error)) => match options.retry {
                    RetryStrategy::FixedDelay {
                        delay,
                        max_attempts,
                    } if attempts < max_attempts => tokio::time::sleep(delay).await,
                    _ => return Err(FailureReason::Failed { error, attempts }),
                },
                Err(panic) => return Err(FailureReason::Panicked(panic.to_string())),
            }
        }
    };
    let timed = |row: usize| async move {
        let outcome = tokio::time::timeout(options.timeout, attempt_all(row))
            .await
            .unwrap_or(Err(FailureReason::TimedOut(options.timeout)));
        (row, outcome)
    };
    // Calls finish in any order: up to `max` are in flight, finished ones wait in `done`
    // (indexed from the next row to hand on) until every row before them is handed on.
    let max = options.max_concurrent_operations.max(1);
    let mut in_flight = FuturesUnordered::new();
    let mut done: VecDeque<Option<Outcome<T>>> = VecDeque::new();
    let (mut next_call, mut next_accept) = (0, 0);
    loop {
        while in_flight.len() < max && next_call < rows {
            in_flight.push(timed(next_call));
            next_call += 1;
        }
        let Some((row, outcome)) = in_flight.next().await else {
            break;
        };
        let slot = row - next_accept;
        if done.len() <= slot {
            done.resize_with(slot + 1, || None);
        }
        done[slot] = Some(outcome);
        while let Some(Some(_)) = done.front() {
            let outcome = done.pop_front().flatten().expect("checked above");
            let row = next_accept;
            next_accept += 1;
            let value = outcome.map_err(|reason| AsyncFailure {
                row: Some(row),
                reason,
            })?;
            accept(row, value).map_err(|error| AsyncFailure {
                row: Some(row),
                reason: FailureReason::Conversion(error),
            })?;
        }
    }
    Ok(())
}

/// What an async table function returns: its rows, or an error.
#[diagnostic::on_unimplemented(
    message = "an async table function returns `Vec<T>` or `Result<Vec<T>>`, not `{Self}`",
    label = "the rows of one call"
)]
pub trait AsyncRows {
    type Item;

    fn into_rows(self) -> Result<Vec<Self::Item>, Error>;
}

impl<T> AsyncRows for Vec<T> {
    type Item = T;

    fn into_rows(self) -> Result<Vec<T>, Error> {
        Ok(self)
    }
}

impl<T, E: Into<Error>> AsyncRows for Result<Vec<T>, E> {
    type Item = T;

    fn into_rows(self) -> Result<Vec<T>, Error> {
        self.map_err(Into::into)
    }
}
