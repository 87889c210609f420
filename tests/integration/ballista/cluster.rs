use std::net::TcpListener;
use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use udf_core::prelude::*;
use udf_examples::catalog::register_all;
use udf_runtime::Session;
use udf_runtime::ballista::{ExecutorOptions, Scheduler, SchedulerOptions, run_executor};

use crate::support::{error, rows, spawn_test, wait_for_line};

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
                let scheduler = Scheduler::start(options, register_all).await.unwrap();
                println!("listening on {}", scheduler.address());
                scheduler.serve().await.unwrap();
            }
            _ => {
                let options = ExecutorOptions::from_args(args).unwrap();
                run_executor(options, register_all).await.unwrap();
            }
        }
    });
}

/// Only the client has it: a cluster must refuse a call of it by name.
#[scalar_function]
fn only_on_the_client(x: i64) -> i64 {
    x + 1
}

/// A scheduler and two executors as processes of their own (this binary again, built with
/// the examples' function list): each plan crosses the codecs, with nothing shared in memory.
#[test]
fn a_scheduler_and_two_executors_in_processes_of_their_own() {
    if let Ok(role) = std::env::var(ROLE) {
        return serve(&role);
    }
    let scheduler_port = free_port();
    let (scheduler, scheduler_lines) = spawn(
        "scheduler",
        &["--bind-port".into(), scheduler_port.to_string()],
    );
    let mut processes = Processes(vec![scheduler]);
    wait_for_line(&scheduler_lines, "listening on", STEP).expect("the scheduler starts");
    let work = std::env::temp_dir().join(format!("udf-ballista-{}", std::process::id()));
    for n in 0..2 {
        let dir = work.join(format!("executor-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let (executor, _) = spawn(
            "executor",
            &[
                "--scheduler-port".into(),
                scheduler_port.to_string(),
                "--bind-port".into(),
                free_port().to_string(),
                "--bind-grpc-port".into(),
                free_port().to_string(),
                "--concurrent-tasks".into(),
                "2".into(),
                "--work-dir".into(),
                dir.to_str().unwrap().into(),
            ],
        );
        processes.0.push(executor);
    }
    runtime().block_on(async {
        tokio::time::timeout(STEP * 2, client(scheduler_port))
            .await
            .expect("the queries finish in time");
    });
    drop(processes);
    let _ = std::fs::remove_dir_all(&work);
}

async fn client(scheduler_port: u16) {
    let cluster = Session::remote(&format!("df://localhost:{scheduler_port}")).unwrap();
    let local = Session::new();
    for session in [&cluster, &local] {
        register_all(session).unwrap();
        udf_examples::register_orders(session).await.unwrap();
    }
    for sql in [
        "SELECT order_id, SubstringFunction(product, 0, 4) AS short, \
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
    ] {
        let expected = rows(&local, sql).await;
        assert!(!expected.is_empty(), "{sql} gives no rows locally");
        assert_eq!(rows(&cluster, sql).await, expected, "{sql}");
    }
    cluster.register(only_on_the_client).unwrap();
    let message = error(&cluster, "SELECT only_on_the_client(order_id) FROM orders").await;
    assert!(
        message.contains("`only_on_the_client`") && message.contains("does not have"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_scheduler_fails_the_query_in_time() {
    let session = Session::remote(&format!("df://localhost:{}", free_port())).unwrap();
    register_all(&session).unwrap();
    let message = tokio::time::timeout(
        STEP,
        error(&session, "SELECT SubstringFunction('abc', 0, 1)"),
    )
    .await
    .expect("the query fails in time");
    assert!(message.to_lowercase().contains("connect"), "{message}");
}
