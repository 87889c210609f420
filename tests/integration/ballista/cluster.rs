use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use udf_core::Value;
use udf_core::prelude::*;
use udf_examples::catalog::register_all;
use udf_examples::scalar::substring::SubstringFunction;
use udf_runtime::Session;
use udf_runtime::ballista::{ExecutorOptions, Scheduler, SchedulerOptions, run_executor};
use udf_runtime::datafusion::dataframe::DataFrameWriteOptions;
use udf_runtime::datafusion::error::Result;
use udf_runtime::datafusion::logical_expr::Partitioning;
use udf_runtime::datafusion::physical_plan::displayable;
use udf_runtime::datafusion::prelude::{ParquetReadOptions, SessionConfig};

use crate::conformance;
use crate::support::{batches_to_rows, error, rows, spawn_test, wait_for_line};

/// Set in a child process: `scheduler` or `executor`; its options are in [`ARGS`].
const ROLE: &str = "UDF_BALLISTA_ROLE";
const ARGS: &str = "UDF_BALLISTA_ARGS";
const TEST: &str = "ballista::cluster::a_scheduler_and_two_executors_in_processes_of_their_own";
/// The longest a step may take: a hang is a failure, not a stuck test.
const STEP: Duration = Duration::from_secs(90);

/// The processes of the test; killed when it ends, however it ends.
struct Processes(Vec<Child>);

impl Drop for Processes {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// This test binary again, as a scheduler or an executor with `args`; its stdout lines.
fn spawn(role: &str, args: &[String]) -> (Child, mpsc::Receiver<String>) {
    spawn_test(TEST, &[(ROLE, role.to_owned()), (ARGS, args.join(" "))])
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// What the cluster's processes carry: the examples' functions and those of the bounded
/// conformance cases.
fn functions(session: &Session) -> Result<()> {
    register_all(session)?;
    session.register(super::standalone::seen_together)?;
    conformance::register_bounded_functions(session)
}

/// The child's part: serve as a scheduler or an executor until killed.
fn serve(role: &str) {
    let args: Vec<String> = std::env::var(ARGS)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    runtime().block_on(async {
        match role {
            "scheduler" => {
                let options = SchedulerOptions::from_args(args).unwrap();
                let scheduler = Scheduler::start(options, functions).await.unwrap();
                println!("listening on {}", scheduler.address());
                scheduler.serve().await.unwrap();
            }
            _ => {
                let options = ExecutorOptions::from_args(args).unwrap();
                run_executor(options, functions).await.unwrap();
            }
        }
    });
}

/// Only the client has it: a cluster must refuse a call of it by name.
#[scalar_function]
fn only_on_the_client(x: i64) -> i64 {
    x + 1
}

/// A scheduler and two executors, each this test binary again in a process of its own;
/// `liveness` shortens how long a silent executor is waited for. Gives the processes (the
/// scheduler first), the scheduler's port and the executors' work directory.
fn start_cluster(liveness: bool) -> (Processes, u16, PathBuf) {
    let scheduler_port = free_port();
    let mut args = vec!["--bind-port".to_owned(), scheduler_port.to_string()];
    if liveness {
        args.extend(["--executor-timeout".to_owned(), "3".to_owned()]);
    }
    let (scheduler, scheduler_lines) = spawn("scheduler", &args);
    let mut processes = Processes(vec![scheduler]);
    wait_for_line(&scheduler_lines, "listening on", STEP).expect("the scheduler starts");
    let work = std::env::temp_dir().join(format!(
        "udf-ballista-{}-{scheduler_port}",
        std::process::id()
    ));
    for n in 0..2 {
        let dir = work.join(format!("executor-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut args: Vec<String> = [
            "--scheduler-port",
            &scheduler_port.to_string(),
            "--bind-port",
            &free_port().to_string(),
            "--bind-grpc-port",
            &free_port().to_string(),
            "--concurrent-tasks",
            "2",
            "--work-dir",
            dir.to_str().unwrap(),
        ]
        .map(str::to_owned)
        .to_vec();
        if liveness {
            args.extend(["--heartbeat-interval".to_owned(), "1".to_owned()]);
        }
        processes.0.push(spawn("executor", &args).0);
    }
    (processes, scheduler_port, work)
}

/// A scheduler and two executors as processes of their own (this binary again, built with
/// the examples' function list): each plan crosses the codecs, with nothing shared in memory.
#[test]
fn a_scheduler_and_two_executors_in_processes_of_their_own() {
    if let Ok(role) = std::env::var(ROLE) {
        return serve(&role);
    }
    let (processes, scheduler_port, work) = start_cluster(false);
    runtime().block_on(async {
        tokio::time::timeout(STEP * 2, client(scheduler_port))
            .await
            .expect("the queries finish in time");
    });
    drop(processes);
    let _ = std::fs::remove_dir_all(&work);
}

/// Keys and rows of the query an executor is killed in.
const KEYS: u64 = 100;
const ROWS: u64 = 400_000;

/// One executor killed (SIGKILL) while a query runs: the query either completes, through
/// Ballista's retries, with the right result, or fails with an error — in bounded time.
#[test]
fn an_executor_killed_mid_query_never_gives_wrong_rows() {
    let (mut processes, scheduler_port, work) = start_cluster(true);
    runtime().block_on(async {
        let data = work.join("src");
        let local = Session::new();
        local
            .sql(&format!(
                "SELECT value AS id FROM generate_series(1, {ROWS})"
            ))
            .await
            .unwrap()
            .repartition(Partitioning::RoundRobinBatch(4))
            .unwrap()
            .write_parquet(data.to_str().unwrap(), DataFrameWriteOptions::new(), None)
            .await
            .unwrap();
        let cluster = Session::remote(&format!("df://localhost:{scheduler_port}")).unwrap();
        register_all(&cluster).unwrap();
        cluster
            .register_parquet("src", data.to_str().unwrap(), ParquetReadOptions::default())
            .await
            .unwrap();
        // Each key counts its rows; the sum of every running count is known in advance.
        let sql = format!(
            "SELECT COUNT(*) AS n, SUM(cnt) AS total FROM counter(input => TABLE \
             (SELECT id % {KEYS} AS k, id FROM src) PARTITION BY k)"
        );
        let query = tokio::spawn(async move {
            let frame = cluster.sql(&sql).await?;
            frame.collect().await
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        let executor = &mut processes.0[1];
        assert!(
            !query.is_finished(),
            "the query still runs when the executor is killed"
        );
        executor.kill().expect("SIGKILL the executor");
        executor.wait().unwrap();
        let outcome = tokio::time::timeout(STEP, query)
            .await
            .expect("the query ends in time")
            .unwrap();
        match outcome {
            Ok(batches) => {
                let per_key = (ROWS / KEYS) as i64;
                assert_eq!(
                    batches_to_rows(&batches),
                    vec![vec![
                        Value::BigInt(ROWS as i64),
                        Value::BigInt(KEYS as i64 * per_key * (per_key + 1) / 2)
                    ]],
                    "a completed query gives the whole result"
                );
            }
            // Seen here: Ballista retries the lost tasks and completes. Were it to give up, its
            // error names the lost executor (a task failed on it, or fetching its output).
            Err(error) => {
                let message = error.to_string();
                assert!(
                    message.to_lowercase().contains("executor"),
                    "the error names the lost executor: {message}"
                )
            }
        }
    });
    drop(processes);
    let _ = std::fs::remove_dir_all(&work);
}

async fn client(scheduler_port: u16) {
    let cluster = Session::remote(&format!("df://localhost:{scheduler_port}")).unwrap();
    let local = Session::new();
    for session in [&cluster, &local] {
        functions(session).unwrap();
        udf_examples::register_orders(session).await.unwrap();
    }
    for sql in [
        "SELECT order_id, SubstringFunction(product, 0, 4) AS short, \
                SubstringInclusive(product, 0, 4) AS inclusive, \
                string_hash(customer, 'c') AS hashed, power_func(price, 2.0) AS squared \
         FROM orders ORDER BY order_id",
        "SELECT customer, hashCode(customer) AS h, SUM(price * quantity) AS spent, \
                WeightedAvg(CAST(quantity AS BIGINT), CAST(order_id AS INT)) AS w \
         FROM orders GROUP BY customer ORDER BY customer",
        "SELECT order_id, word, length, tour FROM orders, \
                LATERAL TABLE(SplitFunction(product)) AS x(word, length), \
                LATERAL TABLE(AsyncBackgroundFunction(customer)) \
         ORDER BY order_id, word",
        "SELECT * FROM Top2(TABLE (SELECT customer, CAST(quantity AS INT) AS q FROM orders) \
         PARTITION BY customer) ORDER BY customer, rank",
        "SELECT * FROM counter(input => TABLE (SELECT customer, order_id FROM orders) \
         PARTITION BY customer) ORDER BY customer, cnt",
        "SELECT name, MAX(seen) FROM SeenTogether(\
         a => TABLE (SELECT customer AS name FROM orders) PARTITION BY name, \
         b => TABLE (SELECT customer AS who FROM orders WHERE quantity > 1) PARTITION BY who) \
         GROUP BY name ORDER BY name",
    ] {
        let expected = rows(&local, sql).await;
        assert!(!expected.is_empty(), "{sql} gives no rows locally");
        assert_eq!(rows(&cluster, sql).await, expected, "{sql}");
    }
    // Without ORDER BY the result lies in a partition per input of the union on the
    // executors, all read at once by the client's exec: the same rows as locally, in some
    // order.
    let spread = Session::remote_with_config(
        &format!("df://localhost:{scheduler_port}"),
        SessionConfig::new().with_target_partitions(3),
    )
    .unwrap();
    functions(&spread).unwrap();
    udf_examples::register_orders(&spread).await.unwrap();
    let sql = "SELECT order_id, string_hash(customer, 'c') AS h FROM orders \
               UNION ALL SELECT order_id + 1000, string_hash(product, 'p') FROM orders";
    let client_plan = spread
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let shown = displayable(client_plan.as_ref()).indent(true).to_string();
    assert!(shown.contains("ClusterQueryExec"), "{shown}");
    let sorted = |mut rows: Vec<Vec<Value>>| {
        rows.sort_by_key(|row| format!("{row:?}"));
        rows
    };
    let expected = sorted(rows(&local, sql).await);
    assert!(expected.len() > 1, "{sql} gives rows locally");
    assert_eq!(sorted(rows(&spread, sql).await), expected, "{sql}");
    // EXPLAIN shows the stages, with the keyed PTF's shuffle.
    let plan = crate::support::explain(
        &cluster,
        "SELECT * FROM counter(input => TABLE orders PARTITION BY customer)",
    )
    .await;
    assert!(
        plan.contains("distributed_plan") && plan.contains("rows partitioned by key upstream"),
        "{plan}"
    );
    // The bounded conformance cases, each with its input in a session of its own.
    for bounded in conformance::BOUNDED {
        let case = conformance::load(bounded.name);
        let session = Session::remote_with_config(
            &format!("df://localhost:{scheduler_port}"),
            SessionConfig::new().with_target_partitions(bounded.partitions),
        )
        .unwrap();
        functions(&session).unwrap();
        bounded.register_input(&case, &session);
        conformance::check(&case, &session).await;
    }
    // The executors' `SubstringInclusive` includes the end; this client's does not.
    let other = Session::remote(&format!("df://localhost:{scheduler_port}")).unwrap();
    other
        .register_as(
            "SubstringInclusive",
            SubstringFunction {
                end_inclusive: false,
            },
        )
        .unwrap();
    udf_examples::register_orders(&other).await.unwrap();
    let message = error(
        &other,
        "SELECT SubstringInclusive(product, 0, 4) FROM orders",
    )
    .await;
    assert!(
        message.contains("`substringinclusive` is configured differently"),
        "{message}"
    );
    cluster.register(only_on_the_client).unwrap();
    let message = error(&cluster, "SELECT only_on_the_client(order_id) FROM orders").await;
    assert!(
        message.contains("`only_on_the_client`") && message.contains("does not have"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_scheduler_fails_the_query_in_time() {
    let port = free_port();
    let session = Session::remote(&format!("df://localhost:{port}")).unwrap();
    register_all(&session).unwrap();
    let message = tokio::time::timeout(
        STEP,
        error(&session, "SELECT SubstringFunction('abc', 0, 1)"),
    )
    .await
    .expect("the query fails in time");
    assert!(
        message.contains(&format!(
            "cannot reach the Ballista scheduler at http://localhost:{port}"
        )),
        "{message}"
    );
}
