//! `open` and `close` of function instances, the same for every kind: `open` gets the
//! query's job parameters; its error or panic becomes a message naming the function, and a
//! panic in `close` is contained (the query has its results by then).

use datafusion::config::ConfigOptions;
use udf_core::{FunctionContext, Metrics};

use crate::session::job_parameters::JobParameters;

/// Runs `open` on an instance of function `name`.
pub fn open(
    name: &str,
    options: &ConfigOptions,
    metrics: &Metrics,
    open: impl FnOnce(&FunctionContext) -> udf_core::Result<()>,
) -> Result<(), String> {
    let context = FunctionContext::new(name, JobParameters::of(options), metrics.clone());
    match udf_core::catch_user_panic(|| open(&context)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(format!("function `{name}` failed to open: {error}")),
        Err(panic) => Err(format!("function `{name}` panicked in open: {}", panic)),
    }
}

/// Runs `close`; a panic in it is dropped.
pub fn close(close: impl FnOnce()) {
    let _ = udf_core::catch_user_panic(close);
}

/// What `open` and `close` are called on: every kind of function with a lifecycle.
pub trait Lifecycle {
    fn open(&mut self, context: &FunctionContext) -> udf_core::Result<()>;
    fn close(&mut self);
}

macro_rules! lifecycle_of {
    ($($function:path),* $(,)?) => {$(
        impl Lifecycle for dyn $function {
            fn open(&mut self, context: &FunctionContext) -> udf_core::Result<()> {
                <dyn $function>::open(self, context)
            }

            fn close(&mut self) {
                <dyn $function>::close(self)
            }
        }
    )*};
}

lifecycle_of!(
    udf_core::ScalarFunction,
    udf_core::AsyncScalarFunction,
    udf_core::TableFunction,
    udf_core::AsyncTableFunction,
    udf_core::ptf::ProcessTableFunction,
);

/// An adapter's own instance of a function with `open`/`close`: made and opened on first
/// use with the query's job parameters, closed when the adapter is dropped.
pub struct LazyInstance<F: ?Sized + Lifecycle> {
    opened: std::sync::OnceLock<Result<Box<F>, String>>,
}

impl<F: ?Sized + Lifecycle> Default for LazyInstance<F> {
    fn default() -> Self {
        LazyInstance {
            opened: std::sync::OnceLock::new(),
        }
    }
}

impl<F: ?Sized + Lifecycle> LazyInstance<F> {
    /// The opened instance; `instantiate` makes it the first time.
    pub fn get(
        &self,
        name: &str,
        options: &ConfigOptions,
        metrics: &Metrics,
        instantiate: impl FnOnce() -> Box<F>,
    ) -> datafusion::common::Result<&F> {
        let opened = self.opened.get_or_init(|| {
            let mut instance = instantiate();
            open(name, options, metrics, |context| instance.open(context)).map(|()| instance)
        });
        match opened {
            Ok(instance) => Ok(instance.as_ref()),
            Err(message) => datafusion::common::exec_err!("{message}"),
        }
    }
}

impl<F: ?Sized + Lifecycle> Drop for LazyInstance<F> {
    fn drop(&mut self) {
        if let Some(Ok(mut instance)) = self.opened.take() {
            close(|| instance.close());
        }
    }
}
