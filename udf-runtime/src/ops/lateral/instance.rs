//! The table function instance one partition calls: the registered one, or — for functions
//! with `open`/`close` — its own copy, opened with the query's job parameters and closed
//! when the partition's stream is dropped.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use datafusion::config::ConfigOptions;
use udf_core::{AsyncTableFunction, TableFunction};

use super::call::{ResolvedCall, TableFunctionImpl};
use crate::functions::lifecycle;

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
        let (name, metrics) = (&call.call.name, &call.call.metrics);
        let opened = match &call.call.function {
            TableFunctionImpl::Sync(function) => match function.instantiate() {
                None => Ok(Instance::Sync(function.clone())),
                Some(mut instance) => {
                    lifecycle::open(name, options, metrics, |context| instance.open(context))
                        .map(|()| Instance::SyncOpened(instance))
                }
            },
            TableFunctionImpl::Async(function) => match function.instantiate() {
                None => Ok(Instance::Async(function.clone())),
                Some(mut instance) => {
                    lifecycle::open(name, options, metrics, |context| instance.open(context))
                        .map(|()| Instance::AsyncOpened(instance))
                }
            },
        };
        opened.map_err(DataFusionError::Execution)
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
        match self {
            Instance::SyncOpened(instance) => lifecycle::close(|| instance.close()),
            Instance::AsyncOpened(instance) => lifecycle::close(|| instance.close()),
            Instance::Sync(_) | Instance::Async(_) => {}
        }
    }
}
