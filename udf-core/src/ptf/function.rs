//! The contract of a process table function, implemented by `#[ptf]`: a processor per
//! virtual processor, called with batches of the rows routed to it.

use std::sync::Arc;

use crate::Error;
use crate::context::FunctionContext;
use crate::ptf::call::{ProcessCall, TimerCall};
use crate::ptf::context::CallInfo;
use crate::ptf::state::{StateBackend, StateStores};
use crate::scalar::ArgColumn;
use crate::spec::{FunctionSpec, StateSpec};
use crate::types::DataType;

/// A process table function in its vectorized form.
pub trait ProcessTableFunction: Send + Sync + 'static {
    /// The signature (table arguments are `ArgType::Table`) and the state entries.
    fn spec(&self) -> FunctionSpec;

    /// A fresh, unopened copy for one query, if the function has `open`/`close`.
    fn instantiate(&self) -> Option<Box<dyn ProcessTableFunction>> {
        None
    }

    /// Runs once per instance before the first call.
    fn open(&mut self, _context: &FunctionContext) -> Result<(), Error> {
        Ok(())
    }

    /// Runs once per instance after the last call.
    fn close(&mut self) {}

    /// A virtual processor's calls. The processor owns `self`: a fresh instance passed here
    /// is closed by [`Processor::close`].
    fn processor(self: Arc<Self>, setup: ProcessorSetup) -> Result<Box<dyn Processor>, Error>;
}

/// What every call of a processor shares.
pub struct ProcessorSetup {
    /// The type of the rows the function emits.
    pub output: DataType,
    /// One column of one value per scalar argument, in declaration order (NULL if left
    /// out), already of the parameter types.
    pub scalars: Vec<ArgColumn>,
    pub info: Arc<CallInfo>,
    /// The state entries, in declaration order.
    pub state: Vec<StateSpec>,
    /// Where the processor keeps its keyed state.
    pub backend: StateBackend,
}

impl ProcessorSetup {
    /// The spec of state entry `index`.
    pub fn state_spec(&self, index: usize) -> Result<&StateSpec, Error> {
        self.state.get(index).ok_or_else(|| {
            Error::msg(format!(
                "`{}` declares state entry {index}, which the call does not know",
                self.info.function
            ))
        })
    }
}

/// One processor's calls.
pub trait Processor: Send {
    /// Empty stores for every state entry (the runtime's keyed-state unit keeps them).
    fn new_state(&self) -> Result<Box<dyn StateStores>, Error>;

    /// Calls `eval` for every row of `call`, in order, firing the timers the watermark makes
    /// due before a row.
    fn process(&mut self, call: &mut ProcessCall<'_>) -> Result<(), Error>;

    /// Calls `on_timer` for every timer due (`call.timers.next_due()`), in order.
    fn on_timer(&mut self, call: &mut TimerCall<'_>) -> Result<(), Error>;

    /// Closes the function instance the processor owns (its last call is over). The runtime
    /// calls it once.
    fn close(&mut self);
}
