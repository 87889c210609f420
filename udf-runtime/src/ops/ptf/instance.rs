//! The function instance of one processor, and its processor: the registered instance, or —
//! for a function with `open`/`close` — its own copy, opened with the query's job parameters
//! before the first call. Closing is explicit and happens once: after the last call (the end
//! of input), or when the processor is dropped (a failed or cancelled query), whichever
//! comes first — not when some field happens to be dropped.

use datafusion::common::{DataFusionError, Result};
use datafusion::config::ConfigOptions;
use udf_core::ptf::{Processor, ProcessorSetup};

use super::call::PtfCall;
use crate::functions::lifecycle;

pub(super) struct Instance {
    processor: Box<dyn Processor>,
    /// The processor owns an instance of its own, opened for this query.
    opened: bool,
    closed: bool,
}

impl Instance {
    /// The processor of a new instance of `call`'s function.
    pub(super) fn open(
        call: &PtfCall,
        options: &ConfigOptions,
        setup: ProcessorSetup,
    ) -> Result<Instance> {
        let failed =
            |e: udf_core::Error| DataFusionError::Execution(format!("`{}`: {e}", call.name));
        match call.function.instantiate() {
            None => Ok(Instance {
                processor: call.function.clone().processor(setup).map_err(failed)?,
                opened: false,
                closed: false,
            }),
            Some(mut instance) => {
                lifecycle::open(&call.name, options, &call.metrics, |context| {
                    instance.open(context)
                })
                .map_err(DataFusionError::Execution)?;
                // From here the processor owns the only handle to the instance: closing it is
                // the processor's `close`.
                Ok(Instance {
                    processor: std::sync::Arc::<dyn udf_core::ptf::ProcessTableFunction>::from(
                        instance,
                    )
                    .processor(setup)
                    .map_err(failed)?,
                    opened: true,
                    closed: false,
                })
            }
        }
    }

    pub(super) fn processor(&mut self) -> &mut dyn Processor {
        self.processor.as_mut()
    }

    /// Closes the instance if it is open (once; later calls do nothing).
    pub(super) fn close(&mut self) {
        if self.opened && !self.closed {
            self.closed = true;
            let processor = &mut self.processor;
            lifecycle::close(|| processor.close());
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.close();
    }
}
