//! The integration tests: one binary, one module per area.

mod aggregate;
mod asynchronous;
mod ballista;
mod changelog;
mod checkpoint;
mod conformance;
mod examples;
mod lifecycle;
mod ptf;
mod scalar;
mod shell;
mod support;
mod table;
mod table_aggregate;
mod window;
