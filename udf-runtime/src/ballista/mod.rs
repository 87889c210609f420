//! Bounded queries on an Apache DataFusion Ballista cluster (Ballista 55).
//!
//! User functions are compiled Rust, so the user builds the scheduler and executor binaries
//! from their own crate, each a few lines around one function list:
//!
//! ```no_run
//! # fn register_all(_: &udf_runtime::Session) -> udf_runtime::datafusion::error::Result<()> { Ok(()) }
//! // src/bin/scheduler.rs
//! fn main() -> std::process::ExitCode {
//!     udf_runtime::ballista::scheduler_main(register_all)
//! }
//! ```
//!
//! and `executor_main(register_all)` likewise; the client is [`Session::remote`] with the same
//! functions registered. Plans travel in DataFusion's format with the project's codecs
//! (`codec.rs`): scalar, async scalar and aggregate functions go by catalog name and are
//! checked against the receiving side's signatures, in-memory tables go as Arrow IPC, and
//! lateral joins, table aggregates, process table functions and windows as records of their
//! own (`lateral.rs`, `table_aggregate.rs`, `ptf.rs`, `window.rs`). What has no encoding (streaming operators,
//! fed tables, anything under checkpoints) fails the query when it is sent, naming it.

mod client;
mod cluster_query;
mod codec;
mod executor;
mod flags;
mod functions;
mod lateral;
mod memory_table;
mod plan_codec;
mod ptf;
mod reach;
mod scheduler;
mod table_aggregate;
mod window;
mod wire;

use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;

use ballista_core::extension::SessionConfigExt;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::session_state::SessionState;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;

pub use executor::{ExecutorOptions, executor_main, run_executor};
pub use plan_codec::{PlanCodec, RoundTrip};
pub use scheduler::{Scheduler, SchedulerOptions, scheduler_main};

use crate::Session;
use codec::{LogicalCodec, PhysicalCodec};
use flags::{Flag, usage};
use functions::FunctionCodec;

/// Whether a session plans for a Ballista cluster (its scheduler's sessions, and a standalone
/// cluster's): operators that shuffle rows themselves in a local plan show the shuffle in the
/// plan instead, where the cluster cuts a stage.
pub(crate) fn plans_for_a_cluster(options: &datafusion::config::ConfigOptions) -> bool {
    options
        .extensions
        .get::<ballista_core::config::BallistaConfig>()
        .is_some()
}

/// Registers the user's functions on a session: the client, the scheduler and every executor
/// run the same list, so all know the same functions.
type RegisterFunctions = Arc<dyn Fn(&Session) -> Result<()> + Send + Sync>;

/// A session with the functions `register` registers, configured as a scheduler's or an
/// executor's sessions are: what their codecs resolve calls against.
fn registered_session(register: &RegisterFunctions) -> Result<Session> {
    scheduler_session(register.as_ref())
}

/// A session that plans as a scheduler does, with the functions `register` registers: its
/// physical plans (EXPLAIN, [`PlanCodec`]) are those a cluster runs, with their shuffles.
pub fn scheduler_session(register: impl Fn(&Session) -> Result<()>) -> Result<Session> {
    let session = Session::with_config(scheduler::cluster_config());
    register(&session)?;
    Ok(session)
}

/// The plan codecs of one session's functions.
#[derive(Clone)]
struct Codecs {
    logical: Arc<dyn LogicalExtensionCodec>,
    physical: Arc<dyn PhysicalExtensionCodec>,
}

impl Codecs {
    fn of(session: &Session) -> Codecs {
        let functions = FunctionCodec::new(session.catalog().clone(), session.metrics().clone());
        Codecs {
            logical: Arc::new(LogicalCodec::new(functions.clone())),
            physical: Arc::new(PhysicalCodec::new(functions)),
        }
    }

    /// `state` with these codecs set where Ballista's planner (client side) and standalone
    /// mode find them.
    fn install(self, state: SessionState) -> SessionState {
        let config = state
            .config()
            .clone()
            .with_ballista_logical_extension_codec(self.logical)
            .with_ballista_physical_extension_codec(self.physical);
        SessionStateBuilder::new_from_existing(state)
            .with_config(config)
            .build()
    }
}

/// Ballista's errors as DataFusion's, saying what was being done.
fn cluster_error(
    doing: &'static str,
) -> impl Fn(ballista_core::error::BallistaError) -> DataFusionError {
    move |e| DataFusionError::Execution(format!("{doing}: {e}"))
}

/// A binary's main: `--help`, a tokio runtime, and the error (if any) on stderr.
fn main_with<F: Future<Output = Result<()>>>(
    program: &str,
    flags: &[Flag],
    body: impl FnOnce(Vec<String>) -> F,
) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--help" || arg == "-h") {
        print!("{}", usage(program, flags));
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Deep plans decode recursively.
        .thread_stack_size(32 * 1024 * 1024)
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("[ERROR] {program}: cannot start a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(body(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("[ERROR] {program}: {e}");
            ExitCode::FAILURE
        }
    }
}
