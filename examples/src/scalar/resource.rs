//! `ResourceFunction` from the API digest: a resource acquired in `open`, released in `close`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use udf_core::prelude::*;

/// Stands for a connection or client: counts how many are open at a time.
#[derive(Debug)]
pub struct SomeResource {
    open: Arc<AtomicUsize>,
}

impl SomeResource {
    fn acquire(open: Arc<AtomicUsize>) -> Self {
        open.fetch_add(1, Ordering::SeqCst);
        SomeResource { open }
    }

    fn process(&self, input: &str) -> String {
        format!("processed({input})")
    }
}

impl Drop for SomeResource {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Every query opens its own copy: `open` acquires the resource, `close` releases it.
#[derive(Clone, Debug, Default)]
pub struct ResourceFunction {
    /// Shared by all copies, so a test can see how many resources are held.
    pub open_resources: Arc<AtomicUsize>,
    resource: Option<Arc<SomeResource>>,
}

#[scalar_function]
impl ResourceFunction {
    fn open(&mut self, _context: &FunctionContext) {
        self.resource = Some(Arc::new(SomeResource::acquire(self.open_resources.clone())));
    }

    fn close(&mut self) {
        self.resource = None;
    }

    fn eval(&self, input: &str) -> Result<String> {
        let resource = self
            .resource
            .as_ref()
            .ok_or_else(|| Error::msg("the function was not opened"))?;
        Ok(resource.process(input))
    }
}
