//! A keyed count in a process table function against a hand-written loop over the same
//! Arrow batches (the practical limit): both route rows by key to the processors, count per
//! key and build output batches `(k, cnt)`.

use std::sync::Arc;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use udf_core::prelude::*;
use udf_runtime::datafusion::arrow::array::{AsArray, Int64Array, RecordBatch};
use udf_runtime::datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema};
use udf_runtime::datafusion::common::HashMap;
use udf_runtime::datafusion::error::{DataFusionError, Result};
use udf_runtime::datafusion::physical_expr::Partitioning;
use udf_runtime::datafusion::physical_expr::expressions::col;
use udf_runtime::datafusion::physical_plan::repartition::RepartitionExec;
use udf_runtime::datafusion::physical_plan::{
    ExecutionPlan, ExecutionPlanProperties, execute_stream_partitioned,
};
use udf_runtime::datafusion::prelude::SessionContext;
use udf_runtime::{Session, WatermarkEmission};

use super::{CustomRun, Workload};
use crate::source::Drained;

/// The keyed input: 10,000 keys, dealt round-robin by id.
const KEYED: &str = "SELECT id % 10000 AS k, id FROM src";

#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Count {
    n: i64,
}

#[derive(Clone, Debug, SqlRow)]
pub(super) struct Counted {
    cnt: i64,
}

/// The input row, typed: reading it allocates nothing (a polymorphic `Row` would box every
/// value).
#[derive(Clone, Debug, SqlRow)]
pub(super) struct Keyed {
    k: i64,
    id: i64,
}

/// Counts the rows of each key, emitting the running count with every row.
#[ptf]
pub(super) fn counter(
    #[state] count: &mut Count,
    #[argument(set_semantic_table)] input: Keyed,
    out: &mut Collector<Counted>,
) {
    let _ = input;
    count.n += 1;
    out.collect(Counted { cnt: count.n });
}

pub fn register_counter(session: &Session) -> Result<()> {
    session.register(counter)
}

pub const PTF_COUNTER: Workload = Workload {
    name: "ptf_counter",
    sql: "SELECT * FROM counter(input => TABLE (SELECT id % 10000 AS k, id FROM src) PARTITION BY k)",
    setup: register_counter,
    baseline: Some("ptf_counter_handwritten"),
    ..Workload::PLAIN
};

pub const PTF_COUNTER_HANDWRITTEN: Workload = Workload {
    name: "ptf_counter_handwritten",
    sql: KEYED,
    custom: Some(handwritten),
    ..Workload::PLAIN
};

/// The keyed input hash-partitioned by `k` over the processors (as the PTF's input is),
/// then per processor a `HashMap` of counts and one output batch per input batch.
fn handwritten(session: SessionContext, processors: usize) -> CustomRun {
    Box::pin(async move {
        let df = session.sql(KEYED).await?;
        let task_context = Arc::new(df.task_ctx());
        let mut plan = df.create_physical_plan().await?;
        if plan.output_partitioning().partition_count() != processors || processors > 1 {
            let key = col("k", &plan.schema())?;
            plan = Arc::new(RepartitionExec::try_new(
                plan,
                Partitioning::Hash(vec![key], processors),
            )?);
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("cnt", DataType::Int64, false),
        ]));
        let streams = execute_stream_partitioned(plan as Arc<dyn ExecutionPlan>, task_context)?;
        let counts = futures::future::try_join_all(streams.into_iter().map(|mut stream| {
            let schema = schema.clone();
            tokio::spawn(async move {
                let mut counts: HashMap<i64, i64> = HashMap::default();
                let mut rows = 0u64;
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    let keys = batch.column(0).as_primitive::<Int64Type>();
                    let cnt = Int64Array::from_iter_values(keys.values().iter().map(|k| {
                        let count = counts.entry(*k).or_insert(0);
                        *count += 1;
                        *count
                    }));
                    let out = RecordBatch::try_new(
                        schema.clone(),
                        vec![batch.column(0).clone(), Arc::new(cnt)],
                    )?;
                    rows += out.num_rows() as u64;
                }
                Ok::<u64, DataFusionError>(rows)
            })
        }))
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let mut rows = 0;
        for count in counts {
            rows += count?;
        }
        Ok(Drained {
            rows,
            out_of_order: 0,
        })
    })
}

/// The keyed input with event time: `ts` is `id` milliseconds, watermark `ts - 1 s`
/// emitted after every batch (as a periodic watermark would be).
fn register_timeouts(session: &Session) -> Result<()> {
    register_keyed_timeouts(session, WatermarkEmission::EveryBatch)
}

/// The same with the watermark emitted after every row (what the conformance cases use).
fn register_timeouts_every_row(session: &Session) -> Result<()> {
    register_keyed_timeouts(session, WatermarkEmission::EveryRow)
}

/// The `timeouts` function alone (for inputs that are not the `keyed` view).
pub(super) fn register_plain_timeouts(session: &Session) -> Result<()> {
    session.register(Timeouts)
}

fn register_keyed_timeouts(session: &Session, emission: WatermarkEmission) -> Result<()> {
    register_keyed_times(session, emission)?;
    session.register(Timeouts)
}

/// The view `keyed(k, id, ts)` over `src`: 10,000 keys, `ts` is `id` milliseconds, watermark
/// `ts - 1 s`.
pub(super) fn register_keyed_times(session: &Session, emission: WatermarkEmission) -> Result<()> {
    futures::executor::block_on(async {
        session
            .sql("CREATE VIEW keyed AS SELECT id % 10000 AS k, id, to_timestamp_millis(id) AS ts FROM src")
            .await?
            .collect()
            .await
    })?;
    session.declare_watermark_with("keyed", "ts", std::time::Duration::from_secs(1), emission);
    Ok(())
}

#[derive(Clone, Debug, SqlRow)]
struct Fired {
    fired_at: i64,
}

/// Every row (re)registers the key's timer `timeout` 5 s later; the timer emits its time.
#[derive(Clone, Copy, Debug, Default)]
struct Timeouts;

#[ptf(name = "timeouts")]
impl Timeouts {
    fn eval(
        &self,
        ctx: &mut Context,
        #[argument(set_semantic_table, require_on_time)] input: Keyed,
        out: &mut Collector<Fired>,
    ) {
        let _ = (input, out);
        let mut time = ctx.time_context();
        if let Some(now) = time.time_millis() {
            time.register_on_time_millis("timeout", now + 5000);
        }
    }

    fn on_timer(&self, ctx: &mut OnTimerContext, out: &mut Collector<Fired>) {
        let fired_at = ctx.time_context().time_millis().unwrap_or_default();
        out.collect(Fired { fired_at });
    }
}

/// Each key has a row every 10 s, so with one input partition every timer fires before the
/// key's next row: one output row per input row. Over several input partitions the
/// watermark follows the slowest one, and a key's next row from a partition ahead may
/// replace its timer first (as event time says): fewer rows, not checked.
pub const PTF_TIMER: Workload = Workload {
    name: "ptf_timer",
    sql: "SELECT * FROM timeouts(input => TABLE keyed PARTITION BY k, on_time => DESCRIPTOR(ts))",
    setup: register_timeouts,
    check_rows: false,
    ..Workload::PLAIN
};

pub const PTF_TIMER_EVERY_ROW: Workload = Workload {
    name: "ptf_timer_every_row",
    setup: register_timeouts_every_row,
    ..PTF_TIMER
};

/// Passes each row's id on: what ORDER BY costs on its own.
#[ptf]
fn in_order(#[argument(set_semantic_table)] input: Keyed, out: &mut Collector<i64>) {
    out.collect(input.id);
}

fn register_in_order(session: &Session) -> Result<()> {
    register_timeouts_every_row(session)?;
    session.register(in_order)
}

/// The keyed input in time order per key (ORDER BY ts), watermark `ts - 1 s` after every
/// row: each row waits a second of event time, then goes to `eval`. No row is late, so
/// every row comes out.
pub const PTF_ORDER_BY: Workload = Workload {
    name: "ptf_order_by",
    sql: "SELECT * FROM in_order(input => TABLE keyed PARTITION BY k ORDER BY ts)",
    setup: register_in_order,
    ..Workload::PLAIN
};

/// `ptf_timer_every_row` with ORDER BY ts: rows wait a second of event time, then set
/// their key's timer as they reach `eval`.
pub const PTF_ORDER_BY_TIMER: Workload = Workload {
    name: "ptf_order_by_timer",
    sql: "SELECT * FROM timeouts(input => TABLE keyed PARTITION BY k ORDER BY ts, on_time => DESCRIPTOR(ts))",
    ..PTF_TIMER_EVERY_ROW
};

/// Orders and payments from `src`: the even ids are orders, the odd ones payments, 1 ms after
/// their order and of the same key (`(id / 2) % 100000`: 100,000 keys); every tenth payment
/// names an order id that does not exist, so its order times out. `ts` is `id` milliseconds,
/// watermark `ts - 1 s` after every batch, per table.
fn register_orders_and_payments(session: &Session) -> Result<()> {
    futures::executor::block_on(async {
        for view in [
            "CREATE VIEW orders AS SELECT (id / 2) % 100000 AS id, id AS amount, to_timestamp_millis(id) AS ts FROM src WHERE id % 2 = 0",
            "CREATE VIEW payments AS SELECT CASE WHEN (id / 2) % 10 = 0 THEN (id / 2) % 100000 + 100000 ELSE (id / 2) % 100000 END AS order_id, id AS amount, to_timestamp_millis(id) AS ts FROM src WHERE id % 2 = 1",
        ] {
            session.sql(view).await?.collect().await?;
        }
        Ok::<_, DataFusionError>(())
    })?;
    for table in ["orders", "payments"] {
        session.declare_watermark_with(
            table,
            "ts",
            std::time::Duration::from_secs(1),
            WatermarkEmission::EveryBatch,
        );
    }
    session.register(udf_examples::ptf::payment_match::PaymentMatch)
}

/// The order/payment match of `examples/src/ptf/payment_match.rs` over two tables of half
/// the input each (5,000,000 rows each with the default `--rows`; rows/s count both), next to
/// `ptf_timer`: each order registers a timer that its payment clears, or that fires a minute
/// later.
pub const PTF_TWO_TABLES: Workload = Workload {
    name: "ptf_two_tables",
    sql: "SELECT * FROM PaymentMatch(orders => TABLE orders PARTITION BY id, payments => TABLE payments PARTITION BY order_id, timeout_seconds => 60, on_time => DESCRIPTOR(ts))",
    setup: register_orders_and_payments,
    baseline: Some("ptf_timer"),
    check_rows: false,
    ..Workload::PLAIN
};
