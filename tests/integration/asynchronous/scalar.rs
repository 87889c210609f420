//! Async scalar functions: the guide's beverage lookup, input order, concurrency, NULLs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use udf_core::Value;
use udf_core::prelude::*;
use udf_examples::asynchronous::beverage_name_lookup::BeverageNameLookupFunction;
use udf_runtime::prelude::*;

use crate::support::{batches_to_rows, column, error, explain, rows, session_with};

fn beverages() -> Session {
    session_with(
        "Beverages",
        &[column(
            "beverageId",
            "INT",
            vec![Value::Int(2), Value::Int(0), Value::Null, Value::Int(1)],
        )],
    )
}

fn quick_lookup() -> BeverageNameLookupFunction {
    BeverageNameLookupFunction {
        latency: Duration::from_millis(5),
    }
}

fn names() -> Vec<Vec<Value>> {
    ["Espresso", "Latte", "", "Cappuccino"]
        .into_iter()
        .map(|n| {
            vec![if n.is_empty() {
                Value::Null
            } else {
                Value::from(n)
            }]
        })
        .collect()
}

#[tokio::test]
async fn beverage_names_in_sql_and_with_the_dataframe_api() {
    let session = beverages();
    session.register(quick_lookup()).unwrap();
    session
        .sql("SET 'table.exec.async-scalar.max-concurrent-operations' = '5'")
        .await
        .unwrap();
    session
        .sql("SET 'table.exec.async-scalar.timeout' = '1m'")
        .await
        .unwrap();
    // The NULL id is not looked up: the parameter is `i32`, so the function is strict.
    assert_eq!(
        rows(
            &session,
            "SELECT GetBeverageName(\"beverageId\") FROM Beverages"
        )
        .await,
        names()
    );
    let table = session.table("Beverages").await.unwrap();
    let registered = table
        .clone()
        .select(vec![
            session
                .call("GetBeverageName", [ident("beverageId")])
                .unwrap(),
        ])
        .unwrap();
    assert_eq!(
        batches_to_rows(&registered.collect().await.unwrap()),
        names()
    );
    let inline = table
        .select(vec![
            session
                .call_inline(quick_lookup(), [ident("beverageId")])
                .unwrap(),
        ])
        .unwrap();
    assert_eq!(batches_to_rows(&inline.collect().await.unwrap()), names());
}

#[tokio::test]
async fn the_plan_awaits_the_calls_in_an_async_operator() {
    let session = beverages();
    session.register(quick_lookup()).unwrap();
    let plan = explain(
        &session,
        "SELECT GetBeverageName(\"beverageId\") FROM Beverages",
    )
    .await;
    assert!(plan.contains("AsyncFuncExec"), "{plan}");
}

#[tokio::test]
async fn an_unknown_beverage_fails_the_query_after_the_retries() {
    let session = session_with(
        "Beverages",
        &[column(
            "beverageId",
            "INT",
            vec![Value::Int(1), Value::Int(7)],
        )],
    );
    session.register(quick_lookup()).unwrap();
    session
        .set_option("table.exec.async-scalar.retry-delay", "1 ms")
        .unwrap();
    let message = error(
        &session,
        "SELECT GetBeverageName(\"beverageId\") FROM Beverages",
    )
    .await;
    assert!(
        message.contains(
            "function `getbeveragename` failed after 3 attempts: Bad beverageId: 7 (row 1 of the batch, arguments: beverage_id => 7)"
        ),
        "{message}"
    );
    session
        .set_option("table.exec.async-scalar.retry-strategy", "NO_RETRY")
        .unwrap();
    let message = error(
        &session,
        "SELECT GetBeverageName(\"beverageId\") FROM Beverages",
    )
    .await;
    assert!(
        message.contains("function `getbeveragename` failed: Bad beverageId: 7 (row 1"),
        "{message}"
    );
}

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MOST_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Sleeps longer for smaller `n` (so later rows finish first) and records how many calls
/// were in flight at once.
#[async_scalar_function]
async fn slow_echo(n: i64) -> i64 {
    let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
    MOST_IN_FLIGHT.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2 * (20 - n as u64 % 20))).await;
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    n
}

#[tokio::test]
async fn results_keep_the_input_order_with_at_most_the_configured_calls_in_flight() {
    let session = session_with(
        "numbers",
        &[column("n", "BIGINT", (0..40).map(Value::BigInt).collect())],
    );
    session.register(slow_echo).unwrap();
    session
        .sql("SET table.exec.async-scalar.max-concurrent-operations = 4")
        .await
        .unwrap();
    let result = rows(&session, "SELECT n, slow_echo(n) FROM numbers").await;
    let expected: Vec<Vec<Value>> = (0..40)
        .map(|n| vec![Value::BigInt(n), Value::BigInt(n)])
        .collect();
    assert_eq!(result, expected);
    assert_eq!(MOST_IN_FLIGHT.load(Ordering::SeqCst), 4);
}

static LIFECYCLE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Adds an offset read from the job parameters in `open`.
#[derive(Clone, Default)]
struct Offset {
    by: i64,
}

#[async_scalar_function]
impl Offset {
    fn open(&mut self, context: &FunctionContext) -> Result<()> {
        self.by = context.get_job_parameter("offset", "0").parse()?;
        LIFECYCLE.lock().unwrap().push(format!("open {}", self.by));
        Ok(())
    }

    fn close(&mut self) {
        LIFECYCLE.lock().unwrap().push("close".to_owned());
    }

    async fn eval(&self, n: i64) -> i64 {
        n + self.by
    }
}

#[tokio::test]
async fn each_query_opens_its_own_instance_and_closes_it() {
    let session = session_with(
        "numbers",
        &[column(
            "n",
            "BIGINT",
            vec![Value::BigInt(1), Value::BigInt(2)],
        )],
    );
    session.register(Offset::default()).unwrap();
    session.set_job_parameter("offset", "100");
    assert_eq!(
        rows(&session, "SELECT offset(n) FROM numbers").await,
        vec![vec![Value::BigInt(101)], vec![Value::BigInt(102)]]
    );
    session.set_job_parameter("offset", "7");
    assert_eq!(
        rows(&session, "SELECT offset(n) FROM numbers").await,
        vec![vec![Value::BigInt(8)], vec![Value::BigInt(9)]]
    );
    let events = LIFECYCLE.lock().unwrap().clone();
    assert_eq!(events, ["open 100", "close", "open 7", "close"]);
}
