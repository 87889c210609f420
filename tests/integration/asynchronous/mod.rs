//! Async scalar and async table functions (SEMANTICS rules 8–10): results in input order,
//! bounded concurrency, timeouts and retries configured with Flink's options.

mod options;
mod scalar;
mod table;
