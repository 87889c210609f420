//! Every form `#[ptf]` accepts compiles.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
struct Count {
    n: i64,
}

#[derive(Clone, Debug, SqlRow)]
struct Order {
    id: i64,
    amount: Option<i32>,
}

/// Context, value/list/map state with names and TTLs, a typed table, scalar arguments.
#[ptf(name = "Everything")]
#[data_type("ROW<id BIGINT, n BIGINT>")]
fn everything(
    ctx: &mut Context,
    #[state(name = "count", ttl = "1 h")] count: &mut Count,
    #[state] ids: &mut ListView<i64>,
    #[state(ttl = "PT30M")] amounts: &mut MapView<String, i32>,
    #[state(type = "ROW<total BIGINT>")] total: &mut Row,
    #[argument(set_semantic_table, optional_partition_by)] order: Order,
    #[argument(name = "min_amount", optional)] min: Option<i32>,
    label: &str,
    out: &mut Collector<Row>,
) -> Result<()> {
    count.n += 1;
    ids.add(order.id);
    amounts.put(label.to_owned(), order.amount.unwrap_or(0));
    total.set_field("total", count.n);
    if order.amount >= min {
        out.collect(Row::of([order.id.into(), count.n.into()]));
    }
    if count.n > 10 {
        ctx.clear_all();
    }
    Ok(())
}

/// A stateless row-semantics function with pass-through columns and a `&Context`.
#[ptf]
fn shout(
    ctx: &Context,
    #[argument(row_semantic_table, pass_columns_through)] input: Row,
    out: &mut Collector<String>,
) {
    let _ = ctx.table_semantics_for("input");
    out.collect(input.to_string().to_uppercase());
}

/// The impl form with open/close.
#[derive(Clone, Default)]
struct Prefixed {
    prefix: String,
}

#[ptf]
impl Prefixed {
    fn open(&mut self, context: &FunctionContext) -> Result<()> {
        self.prefix = context.get_job_parameter("prefix", ">");
        Ok(())
    }

    fn eval(
        &self,
        #[state] seen: &mut i64,
        #[argument(set_semantic_table)] input: Row,
        out: &mut Collector<String>,
    ) {
        *seen += 1;
        out.collect(format!("{}{input}", self.prefix));
    }

    fn close(&mut self) {}
}

/// Timers: `on_timer` with the context and the state entries of `eval`.
#[derive(Clone, Copy, Default)]
struct Timeout;

#[ptf]
impl Timeout {
    #[data_type("ROW<n BIGINT>")]
    fn eval(
        &self,
        ctx: &mut Context,
        #[state] count: &mut i64,
        #[state] names: &mut MapView<String, i64>,
        #[argument(set_semantic_table, require_on_time)] input: Row,
        out: &mut Collector<Row>,
    ) {
        let _ = (input, names, out);
        *count += 1;
        let mut time = ctx.time_context();
        if let Some(now) = time.time() {
            time.register_on_time("timeout", now + chrono::Duration::seconds(5));
            time.register_on_time_unnamed(now);
            time.clear_timer_at(now);
        }
    }

    fn on_timer(
        &self,
        ctx: &mut OnTimerContext,
        #[state] count: &mut i64,
        #[state] names: &mut MapView<String, i64>,
        out: &mut Collector<Row>,
    ) -> Result<()> {
        let _ = (ctx.current_timer(), names);
        out.collect(Row::of([(*count).into()]));
        ctx.time_context().clear_all_timers();
        Ok(())
    }
}

/// Scalar arguments only.
#[ptf]
fn add(a: i32, b: i32, out: &mut Collector<i32>) {
    out.collect(a + b);
}

/// Several co-partitioned tables: each row is one table's, the others `None`.
#[ptf]
fn enrich(
    ctx: &mut Context,
    #[state] last: &mut Count,
    #[argument(set_semantic_table)] order: Option<Order>,
    #[argument(set_semantic_table, optional_partition_by)] update: Option<Row>,
    scale: i64,
    out: &mut Collector<i64>,
) {
    let _ = ctx.table_semantics_for("update");
    match (order, update) {
        (Some(order), _) => out.collect(order.id * scale + last.n),
        (None, Some(_)) => last.n += 1,
        (None, None) => {}
    }
}

fn main() {
    let _ = udf_core::UserFunction::into_function(enrich);
    let _ = udf_core::UserFunction::into_function(everything);
    let _ = udf_core::UserFunction::into_function(shout);
    let _ = udf_core::UserFunction::into_function(Prefixed::default());
    let _ = udf_core::UserFunction::into_function(add);
    let _ = udf_core::UserFunction::into_function(Timeout);
}
