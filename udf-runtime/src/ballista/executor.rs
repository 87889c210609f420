//! A Ballista executor that knows the user's functions: its function registry and codecs come
//! from a [`Session`] on which the user's function list is registered.

use std::process::ExitCode;
use std::sync::Arc;

use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use datafusion::common::{DataFusionError, Result};

use super::flags::{Flag, Flags, usage};
use super::scheduler::cluster_config;
use super::{Codecs, RegisterFunctions, cluster_error, main_with, registered_session};
use crate::Session;

/// Where an executor listens and which scheduler it serves.
#[derive(Clone, Debug)]
pub struct ExecutorOptions {
    pub bind_host: String,
    /// The Arrow Flight port other executors and clients fetch results from.
    pub bind_port: u16,
    /// The port of the executor's own gRPC service.
    pub grpc_port: u16,
    /// The host others reach this executor at (the bind host if `None`).
    pub external_host: Option<String>,
    pub scheduler_host: String,
    pub scheduler_port: u16,
    /// How many tasks run at once (`0`: one per core).
    pub concurrent_tasks: usize,
    /// Where shuffle files go (a fresh temporary directory if `None`).
    pub work_dir: Option<String>,
    /// How long to keep trying to reach the scheduler at start.
    pub scheduler_connect_timeout_seconds: u16,
    /// How often it tells the scheduler it is alive.
    pub heartbeat_interval_seconds: u64,
}

impl Default for ExecutorOptions {
    fn default() -> Self {
        ExecutorOptions {
            bind_host: "127.0.0.1".into(),
            bind_port: 50051,
            grpc_port: 50052,
            external_host: None,
            scheduler_host: "localhost".into(),
            scheduler_port: 50050,
            concurrent_tasks: 0,
            work_dir: None,
            scheduler_connect_timeout_seconds: 30,
            heartbeat_interval_seconds: 60,
        }
    }
}

const FLAGS: &[Flag] = &[
    Flag {
        name: "bind-host",
        help: "the address to listen on",
        default: "127.0.0.1",
    },
    Flag {
        name: "bind-port",
        help: "the Arrow Flight port results are fetched from",
        default: "50051",
    },
    Flag {
        name: "bind-grpc-port",
        help: "the port of the executor's gRPC service",
        default: "50052",
    },
    Flag {
        name: "external-host",
        help: "the host others reach this executor at (default: the bind host)",
        default: "",
    },
    Flag {
        name: "scheduler-host",
        help: "the scheduler's host",
        default: "localhost",
    },
    Flag {
        name: "scheduler-port",
        help: "the scheduler's port",
        default: "50050",
    },
    Flag {
        name: "concurrent-tasks",
        help: "tasks run at once, 0 for one per core",
        default: "0",
    },
    Flag {
        name: "work-dir",
        help: "where shuffle files go (default: a new temporary directory)",
        default: "",
    },
    Flag {
        name: "scheduler-connect-timeout",
        help: "seconds to keep trying to reach the scheduler at start",
        default: "30",
    },
    Flag {
        name: "heartbeat-interval",
        help: "seconds between the executor's heartbeats to the scheduler",
        default: "60",
    },
];

impl ExecutorOptions {
    /// The options of a command line (`--scheduler-port 50050`, ...), the program name
    /// excluded.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let flags = Flags::parse(args, FLAGS)?;
        let optional = |name: &str| Some(flags.text(name)).filter(|text| !text.is_empty());
        Ok(ExecutorOptions {
            bind_host: flags.text("bind-host"),
            bind_port: flags.number("bind-port")?,
            grpc_port: flags.number("bind-grpc-port")?,
            external_host: optional("external-host"),
            scheduler_host: flags.text("scheduler-host"),
            scheduler_port: flags.number("scheduler-port")?,
            concurrent_tasks: flags.number("concurrent-tasks")?,
            work_dir: optional("work-dir"),
            scheduler_connect_timeout_seconds: flags.number("scheduler-connect-timeout")?,
            heartbeat_interval_seconds: flags.number("heartbeat-interval")?,
        })
    }
}

/// Runs an executor with the functions `register` registers, until it is stopped (Ctrl-C,
/// or the scheduler telling it to).
pub async fn run_executor(
    options: ExecutorOptions,
    register: impl Fn(&Session) -> Result<()> + Send + Sync + 'static,
) -> Result<()> {
    let register: RegisterFunctions = Arc::new(register);
    let session = registered_session(&register)?;
    let codecs = Codecs::of(&session);
    let functions = BallistaFunctionRegistry::from(&session.context().state());
    let config = ExecutorProcessConfig {
        bind_host: options.bind_host,
        port: options.bind_port,
        grpc_port: options.grpc_port,
        external_host: options.external_host,
        scheduler_host: options.scheduler_host,
        scheduler_port: options.scheduler_port,
        scheduler_connect_timeout_seconds: options.scheduler_connect_timeout_seconds,
        vcores: options.concurrent_tasks,
        work_dir: options.work_dir,
        executor_heartbeat_interval_seconds: options.heartbeat_interval_seconds,
        override_function_registry: Some(Arc::new(functions)),
        override_config_producer: Some(Arc::new(cluster_config)),
        override_logical_codec: Some(codecs.logical.clone()),
        override_physical_codec: Some(codecs.physical.clone()),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(cluster_error("the executor stopped"))
}

/// The body of an executor binary: `fn main() -> ExitCode { executor_main(register_all) }`.
/// It takes `--scheduler-host`, `--scheduler-port`, `--bind-port`, ... (`--help` lists them)
/// and runs until stopped.
pub fn executor_main(
    register: impl Fn(&Session) -> Result<()> + Send + Sync + 'static,
) -> ExitCode {
    main_with("udf-executor", FLAGS, |args| async move {
        let options = ExecutorOptions::from_args(args).map_err(|e| {
            DataFusionError::Configuration(format!("{e}\n{}", usage("udf-executor", FLAGS)))
        })?;
        run_executor(options, register).await
    })
}
