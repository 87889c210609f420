//! A PTF over two tables: orders matched with their payments within a timeout. The tables
//! are co-partitioned (`orders PARTITION BY id`, `payments PARTITION BY order_id`), so an
//! order and its payments meet in one processor and share the key's state and timers; each
//! row arrives with its own table's argument set and the other `None`.
//!
//! ```sql
//! SELECT * FROM PaymentMatch(
//!     orders => TABLE orders PARTITION BY id,
//!     payments => TABLE payments PARTITION BY order_id,
//!     timeout_seconds => 60,
//!     on_time => DESCRIPTOR(ts))
//! ```
//!
//! The outcome depends on event time only, not on which table's rows reach the processor
//! first: a payment counts if its time is at most the order's time plus the timeout;
//! otherwise the order's timer (named `timeout`) reports it unpaid.

use serde::{Deserialize, Serialize};
use udf_core::prelude::*;

/// An order row (the table's other columns are not read).
#[derive(Clone, Debug, PartialEq, SqlRow)]
pub struct Order {
    pub id: i64,
    pub amount: i64,
}

/// A payment row.
#[derive(Clone, Debug, PartialEq, SqlRow)]
pub struct Payment {
    pub order_id: i64,
    pub amount: i64,
}

/// What is known of an order id so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// The order's amount and the last time a payment counts (epoch ms).
    pub order: Option<(i64, i64)>,
    /// A payment that came before its order: amount and time.
    pub early_payment: Option<(i64, i64)>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct PaymentMatch;

#[ptf(name = "PaymentMatch")]
impl PaymentMatch {
    fn eval(
        &self,
        ctx: &mut Context,
        #[state] pending: &mut Pending,
        #[argument(set_semantic_table, require_on_time)] orders: Option<Order>,
        #[argument(set_semantic_table, require_on_time)] payments: Option<Payment>,
        timeout_seconds: i64,
        out: &mut Collector<String>,
    ) {
        let Some(now) = ctx.time_context().time_millis() else {
            return;
        };
        if let Some(order) = orders {
            let deadline = now.saturating_add(timeout_seconds.saturating_mul(1000));
            match pending.early_payment.take() {
                Some((paid, at)) if at <= deadline => {
                    out.collect_fmt(format_args!("paid {paid} of {}", order.amount));
                    ctx.clear_all();
                }
                _ => {
                    pending.order = Some((order.amount, deadline));
                    ctx.time_context()
                        .register_on_time_millis("timeout", deadline);
                }
            }
        }
        if let Some(payment) = payments {
            match pending.order {
                Some((amount, deadline)) if now <= deadline => {
                    out.collect_fmt(format_args!("paid {} of {amount}", payment.amount));
                    ctx.clear_all();
                }
                // Too late: the order's timer reports it.
                Some(_) => {}
                None => pending.early_payment = Some((payment.amount, now)),
            }
        }
    }

    fn on_timer(
        &self,
        ctx: &mut OnTimerContext,
        #[state] pending: &mut Pending,
        out: &mut Collector<String>,
    ) {
        if let Some((amount, _)) = pending.order {
            out.collect_fmt(format_args!("unpaid {amount}"));
        }
        ctx.clear_all();
    }
}
