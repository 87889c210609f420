//! Attribute macros of the UDF framework. Each macro parses the annotated Rust item into a
//! model, checks it (collecting every error, each at the offending token) and expands it
//! into trait impls against `udf_core::__private`.

mod aggregate;
mod attr;
mod check;
mod ctxt;
mod dispatch;
mod eval;
mod hint;
mod ptf;
mod signature;
mod sql_row;
mod types;

#[cfg(test)]
mod expansion_tests;

use proc_macro::TokenStream;

/// Turns a `fn` or an `impl` block into a SQL scalar function.
///
/// ```ignore
/// #[scalar_function]
/// fn substring(s: &str, begin: i32, end: i32) -> Result<String> { ... }
///
/// #[scalar_function(name = "sum")]
/// impl SumFunction {
///     fn eval(&self, a: i32, b: i32) -> i32 { a + b }
///     #[varargs]
///     fn eval_doubles(&self, d: &[f64]) -> i32 { ... }
/// }
/// ```
///
/// Options: `name = "..."` (SQL name), `deterministic = false`, `constant_folding = false`.
/// Parameters take `#[argument(name = "...", optional, type = "...")]` and
/// `#[data_type("...")]`; the function takes `#[data_type("...")]` for its result and
/// `#[varargs]` for a trailing slice parameter.
#[proc_macro_attribute]
pub fn scalar_function(args: TokenStream, input: TokenStream) -> TokenStream {
    eval::expand(eval::Flavor::Scalar, args.into(), input.into()).into()
}

/// Turns a `fn` or an `impl` block into a SQL table function: each call emits rows through
/// a last parameter `out: &mut Collector<T>`.
///
/// ```ignore
/// #[table_function]
/// #[data_type("ROW<word STRING, length INT>")]
/// fn split(s: &str, out: &mut Collector<Row>) {
///     for word in s.split(' ') {
///         out.collect(Row::of([word.into(), (word.len() as i32).into()]));
///     }
/// }
/// ```
///
/// `T` is the row type: a `#[derive(SqlRow)]` struct (its fields become columns), `Row` with a
/// hint, or a single value (one column `f0`). Overloads, hints, named and optional arguments,
/// `open`/`close` and the options `name` and `deterministic` work as for `#[scalar_function]`.
#[proc_macro_attribute]
pub fn table_function(args: TokenStream, input: TokenStream) -> TokenStream {
    eval::expand(eval::Flavor::Table, args.into(), input.into()).into()
}

/// Turns an `async fn` (or an `impl` block of `async fn eval*` methods) into a SQL scalar
/// function whose calls run concurrently.
///
/// ```ignore
/// #[async_scalar_function]
/// async fn beverage_name(id: i32) -> Result<String> { ... }
/// ```
///
/// Within a batch, at most `table.exec.async-scalar.max-concurrent-operations` calls are in
/// flight, each bounded by `.timeout` and retried per `.retry-strategy`; results keep the
/// input order. Parameters, hints, overloads and `open`/`close` work as for
/// `#[scalar_function]`.
#[proc_macro_attribute]
pub fn async_scalar_function(args: TokenStream, input: TokenStream) -> TokenStream {
    eval::expand(eval::Flavor::AsyncScalar, args.into(), input.into()).into()
}

/// Turns an `async fn` (or an `impl` block of `async fn eval*` methods) returning
/// `Vec<T>` or `Result<Vec<T>>` into a SQL table function whose calls run concurrently
/// (options `table.exec.async-table.*`). Rows keep the input order.
///
/// ```ignore
/// #[async_table_function]
/// #[data_type("ROW<user STRING, tour STRING>")]
/// async fn tours(user_id: &str) -> Result<Vec<Row>> { ... }
/// ```
#[proc_macro_attribute]
pub fn async_table_function(args: TokenStream, input: TokenStream) -> TokenStream {
    eval::expand(eval::Flavor::AsyncTable, args.into(), input.into()).into()
}

/// Turns an `impl` block into a SQL aggregate function.
///
/// ```ignore
/// #[aggregate_function]
/// impl WeightedAvg {
///     type Acc = WeightedAvgAccumulator;          // Default + Clone + Serialize + DeserializeOwned
///     fn accumulate(acc: &mut Self::Acc, value: i64, weight: i32) { ... }
///     fn retract(acc: &mut Self::Acc, value: i64, weight: i32) { ... }     // optional
///     fn merge(acc: &mut Self::Acc, other: &Self::Acc) { ... }             // optional
///     fn get_value(acc: &Self::Acc) -> Option<i64> { ... }
/// }
/// ```
///
/// Options: `name = "..."`, `deterministic = false`, and `retract` / `merge` to declare
/// capabilities (a declared capability without its method is an error).
#[proc_macro_attribute]
pub fn aggregate_function(args: TokenStream, input: TokenStream) -> TokenStream {
    aggregate::expand(aggregate::Kind::Aggregate, args.into(), input.into()).into()
}

/// Turns an `impl` block into a table aggregate function: accumulators as for
/// `#[aggregate_function]`, and rows emitted per group.
///
/// ```ignore
/// #[table_aggregate_function]
/// impl Top2 {
///     fn accumulate(acc: &mut Top2Accumulator, value: i32) { ... }
///     fn emit_value(acc: &Top2Accumulator, out: &mut Collector<Ranked>) { ... }
///     // and/or:
///     fn emit_update_with_retract(acc: &Top2Accumulator, out: &mut RetractableCollector<Ranked>) { ... }
/// }
/// ```
#[proc_macro_attribute]
pub fn table_aggregate_function(args: TokenStream, input: TokenStream) -> TokenStream {
    aggregate::expand(aggregate::Kind::TableAggregate, args.into(), input.into()).into()
}

/// Turns a `fn` or an `impl` block with one `eval` into a process table function (PTF): a
/// user-defined operator over a table, with keyed state.
///
/// ```ignore
/// #[ptf]
/// #[data_type("ROW<cnt BIGINT>")]
/// fn counter(
///     #[state] count: &mut CountState,                // Default + Clone + PartialEq + serde
///     #[argument(set_semantic_table)] input: Row,     // or a #[derive(SqlRow)] struct
///     out: &mut Collector<Row>,
/// ) {
///     count.n += 1;
///     out.collect(Row::of([count.n.into()]));
/// }
/// ```
///
/// Parameters come in this order: an optional `ctx: &mut Context`, the `#[state]` entries
/// (`&mut T`, `&mut ListView<T>`, `&mut MapView<K, V>`; options `name`, `ttl = "1 day"`,
/// `type`), the arguments, and `out: &mut Collector<T>` last. A table argument takes
/// `#[argument(row_semantic_table)]` or `#[argument(set_semantic_table)]`, plus
/// `optional_partition_by`, `pass_columns_through`, `require_on_time`, `supports_updates` (a
/// set-semantics table that may be a changelog: `ctx.row_kind()` tells each row's kind);
/// scalar arguments take
/// `name`, `type` and `optional` as for other functions. Option: `name = "..."`.
#[proc_macro_attribute]
pub fn ptf(args: TokenStream, input: TokenStream) -> TokenStream {
    ptf::expand(args.into(), input.into()).into()
}

/// Makes a struct a SQL `ROW` type, field by field (`#[data_type("...")]` on a field
/// overrides its type).
#[proc_macro_derive(SqlRow, attributes(data_type))]
pub fn derive_sql_row(input: TokenStream) -> TokenStream {
    sql_row::expand(input.into()).into()
}
