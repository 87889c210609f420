//! `open` and `close` of function instances, the same for every kind: `open` gets the
//! query's job parameters; its error or panic becomes a message naming the function, and a
//! panic in `close` is contained (the query has its results by then).

use std::panic::{AssertUnwindSafe, catch_unwind};

use datafusion::config::ConfigOptions;
use udf_core::{FunctionContext, Metrics};

use super::config::JobParameters;

/// Runs `open` on an instance of function `name`.
pub fn open(
    name: &str,
    options: &ConfigOptions,
    metrics: &Metrics,
    open: impl FnOnce(&FunctionContext) -> udf_core::Result<()>,
) -> Result<(), String> {
    let context = FunctionContext::new(name, JobParameters::of(options), metrics.clone());
    match catch_unwind(AssertUnwindSafe(|| open(&context))) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(format!("function `{name}` failed to open: {error}")),
        Err(panic) => Err(format!(
            "function `{name}` panicked in open: {}",
            udf_core::panic_message(panic.as_ref())
        )),
    }
}

/// Runs `close`; a panic in it is dropped.
pub fn close(close: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(close));
}
