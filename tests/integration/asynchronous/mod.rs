//! Async scalar and async table functions (rules 8–10 of docs/semantics.md): results in input order,
//! bounded concurrency, timeouts and retries configured with Flink's options.

mod options;
mod scalar;
mod table;
