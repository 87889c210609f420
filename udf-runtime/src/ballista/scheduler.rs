//! A Ballista scheduler that knows the user's functions: it decodes the client's plans with
//! the project's codecs and plans them with a [`Session`] on which the user's function list
//! is registered.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use ballista_core::extension::SessionConfigExt;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service_with_listener};
use datafusion::common::{DataFusionError, Result};
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use tokio::task::JoinHandle;

use super::flags::{Flag, Flags, usage};
use super::{Codecs, RegisterFunctions, cluster_error, main_with, registered_session};
use crate::Session;

/// Where a scheduler listens.
#[derive(Clone, Debug)]
pub struct SchedulerOptions {
    pub bind_host: String,
    /// `0` picks a free port ([`Scheduler::address`] tells which).
    pub bind_port: u16,
    /// The host executors and clients reach this scheduler at.
    pub external_host: String,
    /// How long an executor may stay silent before its tasks are given to others.
    pub executor_timeout_seconds: u64,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        SchedulerOptions {
            bind_host: "127.0.0.1".into(),
            bind_port: 50050,
            external_host: "localhost".into(),
            executor_timeout_seconds: 180,
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
        help: "the port to listen on",
        default: "50050",
    },
    Flag {
        name: "external-host",
        help: "the host executors reach this scheduler at",
        default: "localhost",
    },
    Flag {
        name: "executor-timeout",
        help: "seconds an executor may stay silent before its tasks go to others",
        default: "180",
    },
];

impl SchedulerOptions {
    /// The options of a command line (`--bind-port 50050`, ...), the program name excluded.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let flags = Flags::parse(args, FLAGS)?;
        Ok(SchedulerOptions {
            bind_host: flags.text("bind-host"),
            bind_port: flags.number("bind-port")?,
            external_host: flags.text("external-host"),
            executor_timeout_seconds: flags.number("executor-timeout")?,
        })
    }
}

/// A scheduler serving on the current tokio runtime.
pub struct Scheduler {
    address: SocketAddr,
    serving: JoinHandle<ballista_core::error::Result<()>>,
}

impl Scheduler {
    /// Starts a scheduler whose sessions carry the functions `register` registers.
    pub async fn start(
        options: SchedulerOptions,
        register: impl Fn(&Session) -> Result<()> + Send + Sync + 'static,
    ) -> Result<Scheduler> {
        let register: RegisterFunctions = Arc::new(register);
        let codecs = Codecs::of(&registered_session(&register)?);
        let listener =
            tokio::net::TcpListener::bind((options.bind_host.as_str(), options.bind_port))
                .await
                .map_err(|e| {
                    DataFusionError::Execution(format!(
                        "the scheduler cannot listen on {}:{}: {e}",
                        options.bind_host, options.bind_port
                    ))
                })?;
        let address = listener.local_addr()?;
        let builder_register = register.clone();
        let config = SchedulerConfig {
            bind_host: options.bind_host,
            bind_port: address.port(),
            external_host: options.external_host,
            override_config_producer: Some(Arc::new(cluster_config)),
            override_session_builder: Some(Arc::new(move |config: SessionConfig| {
                let session = Session::with_config(static_planning(config));
                builder_register(&session)?;
                Ok(session.context().state())
            })),
            override_logical_codec: Some(codecs.logical.clone()),
            override_physical_codec: Some(codecs.physical.clone()),
            executor_timeout_seconds: options.executor_timeout_seconds,
            // Dead executors are looked for at least as often as they may stay silent.
            expire_dead_executor_interval_seconds: options.executor_timeout_seconds.clamp(1, 15),
            ..SchedulerConfig::default()
        };
        let cluster = BallistaCluster::new_from_config(&config)
            .await
            .map_err(cluster_error("starting the scheduler"))?;
        let scheduler =
            create_scheduler::<LogicalPlanNode, PhysicalPlanNode>(cluster, Arc::new(config))
                .await
                .map_err(cluster_error("starting the scheduler"))?;
        let serving = tokio::spawn(start_grpc_service_with_listener(listener, scheduler));
        Ok(Scheduler { address, serving })
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Serves until the service fails (it does not stop otherwise).
    pub async fn serve(self) -> Result<()> {
        match self.serving.await {
            Ok(result) => result.map_err(cluster_error("the scheduler stopped")),
            Err(e) => Err(DataFusionError::Execution(format!(
                "the scheduler stopped: {e}"
            ))),
        }
    }
}

/// The session settings a scheduler or executor starts from; the client's values arrive with
/// each job and land in the option sets registered here.
pub(super) fn cluster_config() -> SessionConfig {
    Session::config_with_options(static_planning(SessionConfig::new_with_ballista()))
}

/// `config` with Ballista's adaptive planner off, whatever the client set. The adaptive
/// planner optimizes physical plans with its own rule list instead of the session's, which
/// would drop the project's rules — among them one-phase aggregation for functions without
/// `merge`, without which such a function fails (or a partial result is lost).
pub(super) fn static_planning(config: SessionConfig) -> SessionConfig {
    config.with_ballista_adaptive_query_planner(false)
}

/// The body of a scheduler binary: `fn main() -> ExitCode { scheduler_main(register_all) }`.
/// It takes `--bind-host`, `--bind-port` and `--external-host`, and runs until killed.
pub fn scheduler_main(
    register: impl Fn(&Session) -> Result<()> + Send + Sync + 'static,
) -> ExitCode {
    main_with("udf-scheduler", FLAGS, |args| async move {
        let options = SchedulerOptions::from_args(args).map_err(|e| {
            DataFusionError::Configuration(format!("{e}\n{}", usage("udf-scheduler", FLAGS)))
        })?;
        let scheduler = Scheduler::start(options, register).await?;
        println!("udf-scheduler listening on {}", scheduler.address());
        scheduler.serve().await
    })
}
