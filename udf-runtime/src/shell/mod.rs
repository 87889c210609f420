//! A SQL shell that carries the user's functions: the user registers them on a [`Session`]
//! and hands it over —
//!
//! ```no_run
//! # async fn main_() -> std::process::ExitCode {
//! let session = udf_runtime::Session::new();
//! // session.register(my_function)?; ...
//! udf_runtime::shell::run(session).await
//! # }
//! ```
//!
//! `-c "SQL"` runs statements and exits, `-f file.sql` runs a file, and without either the
//! shell reads statements from the terminal (line editing and history, statements ending in
//! `;` over several lines, `\?` for help, `\q` to quit). A script stops at its first failing
//! statement with exit code 1 unless `--continue` is given. Results print as Flink's SQL
//! client prints them (`results.rs`); `SHOW FUNCTIONS` and `DESCRIBE FUNCTION f` answer from
//! the catalog (`catalog.rs`). In the terminal, Ctrl-C stops the running query (its tasks
//! end with it) and returns to the prompt, and a long bounded query shows its progress
//! (`progress/`).

mod args;
mod catalog;
mod console;
mod interrupts;
mod progress;
mod repl;
mod results;
mod split;

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SendableRecordBatchStream;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_plan::{ExecutionPlanProperties, execute_stream};
use futures::StreamExt;
use object_store::local::LocalFileSystem;

pub use args::Args;
pub use console::{Console, Terminal, Transcript};
pub use results::ResultMode;
pub use split::{Piece, Splitter, split_script};

use crate::Session;
use catalog::CatalogStatement;
use progress::read_bytes::CountingStore;
use progress::{Progress, ProgressLine, redraw_ticks};
use results::RowPrinter;

/// The option that picks how results print.
const RESULT_MODE: &str = "sql-client.execution.result-mode";

/// Runs the shell on `session` as the process's arguments ask (see [`Args`]); the exit code
/// a script can rely on.
pub async fn run(session: Session) -> std::process::ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}\n\n{}", Args::USAGE);
            return std::process::ExitCode::from(2);
        }
    };
    if args.help {
        println!("{}", Args::USAGE);
        return std::process::ExitCode::SUCCESS;
    }
    let mut shell = Shell::new(session).continue_on_error(args.continue_on_error);
    // Progress only for a person watching: not when output goes to a file or a pipe.
    if std::io::stdout().is_terminal() && std::io::stderr().is_terminal() {
        shell = shell.show_progress();
    }
    let mut console = Terminal;
    let script = match (&args.command, &args.file) {
        (Some(command), _) => Some(command.clone()),
        (None, Some(file)) => match std::fs::read_to_string(file) {
            Ok(text) => Some(text),
            Err(error) => {
                eprintln!("[ERROR] cannot read {}: {error}", file.display());
                return std::process::ExitCode::from(2);
            }
        },
        (None, None) => None,
    };
    let succeeded = match script {
        Some(script) => shell.run_script(&script, &mut console).await,
        None => repl::run(&mut shell, &mut console).await,
    };
    if succeeded {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// What a piece of input asks of the shell next.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Continue,
    Quit,
}

/// A session and how it prints.
pub struct Shell {
    session: Session,
    mode: ResultMode,
    continue_on_error: bool,
    /// Ctrl-C cancels a running query (in the terminal; a script ends as a process does).
    interrupts: Option<tokio::sync::mpsc::Receiver<()>>,
    /// The bytes read from local files, when long bounded queries show their progress.
    bytes_read: Option<Arc<AtomicU64>>,
}

impl Shell {
    pub fn new(session: Session) -> Self {
        Shell {
            session,
            mode: ResultMode::default(),
            continue_on_error: false,
            interrupts: None,
            bytes_read: None,
        }
    }

    /// Long bounded queries show a progress line (through [`Console::status`]); local files
    /// are read through a store that counts their bytes.
    pub fn show_progress(mut self) -> Self {
        let store = CountingStore::new(Arc::new(LocalFileSystem::new()));
        self.bytes_read = Some(store.counter());
        self.session
            .context()
            .register_object_store(ObjectStoreUrl::local_filesystem().as_ref(), Arc::new(store));
        self
    }

    /// Whether a script goes on after a failing statement.
    pub fn continue_on_error(mut self, yes: bool) -> Self {
        self.continue_on_error = yes;
        self
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Runs every statement and command of `script`; whether all succeeded. It stops at the
    /// first failure unless told to continue, and at `\q`.
    pub async fn run_script(&mut self, script: &str, console: &mut dyn Console) -> bool {
        let mut succeeded = true;
        for piece in split_script(script) {
            match self.run_piece(piece, console).await {
                Ok(Next::Continue) => {}
                Ok(Next::Quit) => break,
                Err(()) => {
                    succeeded = false;
                    if !self.continue_on_error {
                        break;
                    }
                }
            }
        }
        succeeded
    }

    /// Runs one piece; a failure is printed (and given as `Err`).
    pub async fn run_piece(&mut self, piece: Piece, console: &mut dyn Console) -> Result<Next, ()> {
        let outcome = match piece {
            Piece::Statement(sql) => self
                .run_statement(&sql, console)
                .await
                .map(|()| Next::Continue),
            Piece::Command(command) => self.run_command(&command, console).await,
        };
        outcome.map_err(|error| console.err(&format!("[ERROR] {}\n", message(&error))))
    }

    async fn run_statement(&mut self, sql: &str, console: &mut dyn Console) -> Result<()> {
        let set = crate::plan::set_option::parse(sql);
        if let Some((key, value)) = &set
            && key.eq_ignore_ascii_case(RESULT_MODE)
        {
            self.mode = value.parse()?;
            console.out("[INFO] Session property has been set.\n");
            return Ok(());
        }
        if let Some(statement) = CatalogStatement::parse(sql) {
            let batch = statement.answer(&self.session)?;
            let mut printer = RowPrinter::new(ResultMode::Table, &batch.schema(), true);
            printer.print(&[batch], console)?;
            printer.finish(console);
            return Ok(());
        }
        let frame = self.session.sql(sql).await?;
        if frame.schema().fields().is_empty() {
            console.out(if set.is_some() {
                "[INFO] Session property has been set.\n"
            } else {
                "[INFO] Execute statement succeeded.\n"
            });
            return Ok(());
        }
        let plan = frame.create_physical_plan().await?;
        let bounded = !plan.boundedness().is_unbounded();
        let mut progress = match &self.bytes_read {
            Some(read) if bounded => Some(ProgressLine::new(Progress::of(&plan, Arc::clone(read)))),
            _ => None,
        };
        let schema = plan.schema();
        let stream = execute_stream(plan, self.session.context().task_ctx())?;
        let outcome = self
            .print_results(stream, schema, bounded, &mut progress, console)
            .await;
        clear(&mut progress, console);
        outcome
    }

    /// Prints a query's rows as the result mode asks, as they come or once complete.
    async fn print_results(
        &mut self,
        mut stream: SendableRecordBatchStream,
        schema: SchemaRef,
        bounded: bool,
        progress: &mut Option<ProgressLine>,
        console: &mut dyn Console,
    ) -> Result<()> {
        // A Ctrl-C from before the query started is not meant for it.
        if let Some(interrupts) = &mut self.interrupts {
            while interrupts.try_recv().is_ok() {}
        }
        // The query runs in a task of its own: polling its stream here could compute for
        // seconds before it returned, with no redraw and no Ctrl-C meanwhile. Dropping the task
        // (on Ctrl-C or an error) stops the query.
        let (sender, mut receiver) = tokio::sync::mpsc::channel(2);
        let _query = SpawnedTask::spawn(async move {
            while let Some(batch) = stream.next().await {
                if sender.send(batch).await.is_err() {
                    break;
                }
            }
        });
        let mut printer = RowPrinter::new(self.mode, &schema, bounded);
        let mut batches = Vec::new();
        let whole = self.mode == ResultMode::Table && bounded;
        let mut redraw = progress.as_ref().map(|_| redraw_ticks());
        while let Some(batch) = self
            .next_batch(&mut receiver, &mut redraw, progress, console)
            .await
        {
            let Some(batch) = batch? else {
                clear(progress, console);
                printer.cancel(console);
                return Ok(());
            };
            if whole {
                batches.push(batch);
            } else {
                clear(progress, console);
                printer.print(&[batch], console)?;
            }
        }
        clear(progress, console);
        if whole {
            printer.print(&results::applied(batches)?, console)?;
        }
        printer.finish(console);
        Ok(())
    }

    /// The query's next batch; `Some(Ok(None))` when Ctrl-C cancelled the query. The progress
    /// line is redrawn meanwhile.
    async fn next_batch(
        &mut self,
        batches: &mut tokio::sync::mpsc::Receiver<Result<RecordBatch>>,
        redraw: &mut Option<tokio::sync::mpsc::Receiver<()>>,
        progress: &mut Option<ProgressLine>,
        console: &mut dyn Console,
    ) -> Option<Result<Option<RecordBatch>>> {
        let interrupted = next_signal(&mut self.interrupts);
        tokio::pin!(interrupted);
        loop {
            tokio::select! {
                batch = batches.recv() => return batch.map(|batch| batch.map(Some)),
                _ = &mut interrupted => return Some(Ok(None)),
                _ = next_signal(redraw) => {
                    if let Some(progress) = progress {
                        progress.redraw(console);
                    }
                }
            }
        }
    }

    async fn run_command(&mut self, command: &str, console: &mut dyn Console) -> Result<Next> {
        let mut words = command.split_whitespace();
        match (words.next().unwrap_or_default(), words.next()) {
            ("\\q" | "\\quit", None) => Ok(Next::Quit),
            ("\\?" | "\\h" | "\\help", None) => {
                console.out(HELP);
                Ok(Next::Continue)
            }
            ("\\df", None) => {
                self.run_statement("SHOW FUNCTIONS", console).await?;
                Ok(Next::Continue)
            }
            ("\\df", Some(name)) => {
                self.run_statement(&format!("DESCRIBE FUNCTION {name}"), console)
                    .await?;
                Ok(Next::Continue)
            }
            _ => Err(DataFusionError::Plan(format!(
                "unknown command `{command}` (\\? lists the commands)"
            ))),
        }
    }
}

/// The next message of `signals`; never, without them (or once their sender is gone).
async fn next_signal<T>(signals: &mut Option<tokio::sync::mpsc::Receiver<T>>) {
    let sent = match signals {
        Some(signals) => signals.recv().await.is_some(),
        None => false,
    };
    if !sent {
        std::future::pending::<()>().await;
    }
}

fn clear(progress: &mut Option<ProgressLine>, console: &mut dyn Console) {
    if let Some(progress) = progress {
        progress.clear(console);
    }
}

/// An error as the user should read it: DataFusion's wrapping prefixes left out.
fn message(error: &DataFusionError) -> String {
    let text = error.to_string();
    for prefix in [
        "Execution error: ",
        "Error during planning: ",
        "External error: ",
    ] {
        if let Some(rest) = text.strip_prefix(prefix) {
            return rest.to_owned();
        }
    }
    text
}

const HELP: &str = "\
Statements end with `;` and may span lines. Besides SQL (SELECT, CREATE TABLE with WATERMARK,
SET 'key' = 'value', EXPLAIN [ANALYZE], calls of table, aggregate and process table functions):
  SHOW FUNCTIONS                   the functions registered, with their kinds
  DESCRIBE FUNCTION f              f's signatures, capabilities and state entries
  SET 'sql-client.execution.result-mode' = 'table' | 'tableau' | 'changelog'
Commands:
  \\df [f]    SHOW FUNCTIONS, or DESCRIBE FUNCTION f
  \\?         this help
  \\q         quit
Ctrl-C stops a running query; Ctrl-D quits.
";
