//! The table function instance one partition calls: the registered one, or — for functions
//! with `open`/`close` — its own copy, opened with the query's job parameters and closed
//! when the partition's stream is dropped.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use datafusion::common::{Result, exec_err};
use datafusion::config::ConfigOptions;
use udf_core::{AsyncTableFunction, FunctionContext, TableFunction};

use super::call::{ResolvedCall, TableFunctionImpl};
use crate::sql::binding;
use crate::sql::config::JobParameters;

pub(super) enum Instance {
    Sync(Arc<dyn TableFunction>),
    SyncOpened(Box<dyn TableFunction>),
    Async(Arc<dyn AsyncTableFunction>),
    AsyncOpened(Box<dyn AsyncTableFunction>),
}

/// What a partition calls, by kind.
pub(super) enum Callable<'a> {
    Sync(&'a dyn TableFunction),
    Async(&'a dyn AsyncTableFunction),
}

impl Instance {
    pub(super) fn open(call: &ResolvedCall, options: &ConfigOptions) -> Result<Instance> {
        let name = &call.call.name;
        let context = || {
            FunctionContext::new(
                name.as_str(),
                JobParameters::of(options),
                call.call.metrics.clone(),
            )
        };
        let opened = |outcome: std::thread::Result<udf_core::Result<()>>| match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => exec_err!("function `{name}` failed to open: {error}"),
            Err(panic) => exec_err!(
                "function `{name}` panicked in open: {}",
                binding::panic_message(&panic)
            ),
        };
        match &call.call.function {
            TableFunctionImpl::Sync(function) => match function.instantiate() {
                None => Ok(Instance::Sync(function.clone())),
                Some(mut instance) => {
                    opened(catch_unwind(AssertUnwindSafe(|| instance.open(&context()))))?;
                    Ok(Instance::SyncOpened(instance))
                }
            },
            TableFunctionImpl::Async(function) => match function.instantiate() {
                None => Ok(Instance::Async(function.clone())),
                Some(mut instance) => {
                    opened(catch_unwind(AssertUnwindSafe(|| instance.open(&context()))))?;
                    Ok(Instance::AsyncOpened(instance))
                }
            },
        }
    }

    pub(super) fn callable(&self) -> Callable<'_> {
        match self {
            Instance::Sync(function) => Callable::Sync(function.as_ref()),
            Instance::SyncOpened(function) => Callable::Sync(function.as_ref()),
            Instance::Async(function) => Callable::Async(function.as_ref()),
            Instance::AsyncOpened(function) => Callable::Async(function.as_ref()),
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // A panic in `close` must not abort the process while the query is torn down.
        match self {
            Instance::SyncOpened(instance) => {
                let _ = catch_unwind(AssertUnwindSafe(|| instance.close()));
            }
            Instance::AsyncOpened(instance) => {
                let _ = catch_unwind(AssertUnwindSafe(|| instance.close()));
            }
            Instance::Sync(_) | Instance::Async(_) => {}
        }
    }
}
