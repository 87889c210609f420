//! The Ballista workloads' cluster: a scheduler and two executors, each this binary again in
//! a process of its own (`--serve scheduler|executor ...`), with every function the
//! workloads call; and `src` written as Parquet files the executors read (an in-memory table
//! would travel inside every plan).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use udf_runtime::Session;
use udf_runtime::ballista::{ExecutorOptions, Scheduler, SchedulerOptions, run_executor};
use udf_runtime::datafusion::error::{DataFusionError, Result};
use udf_runtime::datafusion::prelude::SessionConfig;

use crate::src_files::SrcFiles;
use crate::workloads;

const EXECUTORS: usize = 2;
/// The longest the cluster may take to start.
const START: Duration = Duration::from_secs(60);

/// Every function a Ballista workload calls: what the scheduler and executors carry.
fn register(session: &Session) -> Result<()> {
    let mut registered: Vec<fn(&Session) -> Result<()>> = Vec::new();
    for functions in workloads::ALL.iter().filter_map(|w| w.cluster) {
        // Workloads share functions (`agg` and `tumble_agg` call `wavg`): each once.
        if !registered
            .iter()
            .any(|r| std::ptr::fn_addr_eq(*r, functions))
        {
            functions(session)?;
            registered.push(functions);
        }
    }
    Ok(())
}

/// The running cluster; its processes are killed when it is dropped.
pub struct Cluster {
    processes: Vec<Child>,
    scheduler_port: u16,
    /// `src` as the executors read it; the cluster's work directories beside it.
    files: SrcFiles,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in &mut self.processes {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn spawn(args: &[String]) -> Result<Child> {
    Command::new(std::env::current_exe()?)
        .arg("--serve")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(DataFusionError::from)
}

/// Waits (bounded) until something listens on `port`.
fn wait_for_port(port: u16, what: &str) -> Result<()> {
    let deadline = Instant::now() + START;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err(DataFusionError::Execution(format!(
                "the {what} did not listen on port {port} within {START:?}"
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

impl Cluster {
    pub fn start() -> Result<Cluster> {
        let files = SrcFiles::new("cluster")?;
        let scheduler_port = free_port()?;
        let mut cluster = Cluster {
            processes: vec![spawn(&["scheduler".into(), scheduler_port.to_string()])?],
            scheduler_port,
            files,
        };
        wait_for_port(scheduler_port, "scheduler")?;
        for n in 0..EXECUTORS {
            let work = cluster.files.dir().join(format!("executor-{n}"));
            std::fs::create_dir_all(&work)?;
            let flight = free_port()?;
            cluster.processes.push(spawn(&[
                "executor".into(),
                scheduler_port.to_string(),
                flight.to_string(),
                free_port()?.to_string(),
                work.to_string_lossy().into_owned(),
            ])?);
            wait_for_port(flight, "executor")?;
        }
        Ok(cluster)
    }

    /// A client session of the cluster with `src` of `rows` ids in `partitions` files.
    pub async fn session(&mut self, rows: u64, partitions: usize) -> Result<Session> {
        let session = Session::remote_with_config(
            &format!("df://localhost:{}", self.scheduler_port),
            SessionConfig::new().with_target_partitions(partitions),
        )?;
        self.files.register(&session, rows, partitions).await?;
        // Shuffle files stay on this machine, where compressing them (Ballista's default, lz4)
        // only costs: about a fifth of `scalar_ballista`'s time here.
        session
            .sql("SET ballista.shuffle.compression.codec = 'none'")
            .await?;
        Ok(session)
    }
}

/// The child's part, given `--serve scheduler PORT` or
/// `--serve executor SCHEDULER_PORT FLIGHT_PORT GRPC_PORT WORK_DIR`.
pub fn serve(args: &[String]) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let number = |at: usize| -> Result<u16> {
        args.get(at)
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| DataFusionError::Configuration(format!("--serve {args:?}")))
    };
    match args.first().map(String::as_str) {
        Some("scheduler") => runtime.block_on(async {
            let options = SchedulerOptions {
                bind_port: number(1)?,
                ..SchedulerOptions::default()
            };
            Scheduler::start(options, register).await?.serve().await
        }),
        Some("executor") => runtime.block_on(async {
            let options = ExecutorOptions {
                scheduler_port: number(1)?,
                bind_port: number(2)?,
                grpc_port: number(3)?,
                work_dir: args.get(4).cloned(),
                ..ExecutorOptions::default()
            };
            run_executor(options, register).await
        }),
        _ => Err(DataFusionError::Configuration(format!("--serve {args:?}"))),
    }
}
