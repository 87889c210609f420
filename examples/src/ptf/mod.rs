//! Process table functions from the `ProcessTableFunction` API documentation, and the
//! functions of the PTF conformance cases.

pub mod concat_non_keys;
pub mod conformance;
pub mod counting;
pub mod history;
pub mod my_ptf;
pub mod payment_match;
pub mod scalar_arguments;
pub mod threshold;
pub mod timer;
