//! The entry point: a DataFusion session that knows user-defined functions.

use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use datafusion::common::{Result, ScalarValue, not_impl_err, plan_datafusion_err, plan_err};
use datafusion::config::{ConfigExtension, Dialect};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::{Expr, lit};
use datafusion::prelude::{DataFrame, SessionConfig, SessionContext};
use datafusion::sql::parser::{DFParserBuilder, Statement as DfStatement};
use udf_core::{Function, FunctionSpec, Metrics, UserFunction};

pub mod catalog;
pub mod checkpoints;
pub mod clock;
pub mod feed;
pub mod job_parameters;
pub mod state_backend;
pub mod table_options;

use crate::changelog::modes::ChangelogModes;
use crate::checkpoint::config::CheckpointConfig;
use crate::checkpoint::jobs::Jobs;
use crate::checkpoint::rule::CheckpointedPlans;
use crate::functions::aggregate::one_phase::OnePhaseWithoutMerge;
use crate::functions::arguments::{self, ArgName};
use crate::functions::registration::EngineFunction;
use crate::ops::lateral::{
    LateralJoins, TableFunctionCall, TableFunctionImpl, TableFunctionPlanner,
};
use crate::ops::ptf::ProcessTableCall;
use crate::ops::table_aggregate::TableAggregateCall;
use crate::ops::table_aggregate::aggregation::EmitMode;
use crate::ops::window::binding::WindowTvfPlanner;
use crate::plan::dialect::UdfDialect;
use crate::plan::query_planner::UdfQueryPlanner;
use crate::plan::relation_planner::TableArgumentPlanner;
use crate::plan::watermark_ddl;
use crate::plan::{set_option, statement};
use crate::streaming::event_time::{WatermarkEmission, WatermarkSpec, Watermarks};
use catalog::{Catalog, CatalogEntry, FunctionInfo, normalize};
use clock::SessionClock;
use job_parameters::JobParameters;
use state_backend::StateBackendConfig;
use table_options::TableOptions;
use udf_core::ptf::ProcessingClock;

/// An embedded SQL engine (DataFusion) with user-defined functions.
///
/// It dereferences to DataFusion's `SessionContext` for everything else: registering
/// tables and files, reading Parquet/CSV/JSON, the DataFrame API.
///
/// ```
/// # use udf_core::prelude::*;
/// # use udf_runtime::Session;
/// #[scalar_function]
/// fn plus_one(x: i64) -> i64 { x + 1 }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> datafusion::error::Result<()> {
/// let session = Session::new();
/// session.register(plus_one)?;
/// let batches = session.sql("SELECT plus_one(41) AS answer").await?.collect().await?;
/// # assert_eq!(batches[0].num_rows(), 1);
/// # Ok(()) }
/// ```
pub struct Session {
    context: SessionContext,
    catalog: Arc<Catalog>,
    metrics: Metrics,
    /// Watermarks declared on tables' time columns.
    watermarks: Arc<Watermarks>,
    inline_calls: AtomicUsize,
    /// The checkpointed queries running, by uid.
    jobs: Arc<Jobs>,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Deref for Session {
    type Target = SessionContext;

    fn deref(&self) -> &SessionContext {
        &self.context
    }
}

impl Session {
    pub fn new() -> Self {
        Session::with_config(SessionConfig::new())
    }

    /// A session with DataFusion settings of your choice (target partitions, batch size, ...).
    pub fn with_config(config: SessionConfig) -> Self {
        let jobs = Arc::new(Jobs::default());
        let config = Session::config_with_options(config).with_extension(jobs.clone());

        let catalog = Arc::new(Catalog::default());
        let metrics = Metrics::default();
        let watermarks = Arc::new(Watermarks::default());
        // Lateral joins become our node before DataFusion's rules see their outer references.
        let mut analyzer_rules = datafusion::optimizer::Analyzer::new().rules;
        analyzer_rules.insert(0, Arc::new(LateralJoins));
        // Changelogs are told apart once the plan is typed.
        analyzer_rules.push(Arc::new(ChangelogModes {
            watermarks: watermarks.clone(),
        }));
        let state = SessionStateBuilder::new()
            .with_config(config)
            .with_default_features()
            .with_query_planner(Arc::new(UdfQueryPlanner {
                catalog: catalog.clone(),
                metrics: metrics.clone(),
            }))
            .with_physical_optimizer_rules(physical_optimizer_rules())
            .with_analyzer_rules(analyzer_rules)
            .with_relation_planners(vec![
                Arc::new(WindowTvfPlanner {
                    watermarks: watermarks.clone(),
                }),
                Arc::new(TableArgumentPlanner {
                    catalog: catalog.clone(),
                    metrics: metrics.clone(),
                    watermarks: watermarks.clone(),
                }),
                Arc::new(TableFunctionPlanner {
                    catalog: catalog.clone(),
                    metrics: metrics.clone(),
                }),
            ])
            .build();
        Session {
            context: SessionContext::new_with_state(state),
            catalog,
            metrics,
            watermarks,
            inline_calls: AtomicUsize::new(0),
            jobs,
        }
    }

    /// `config` with the session's option sets (`udf.*`, `table.*`, `state.*`,
    /// `execution.checkpointing.*`) added where it lacks them; values it already has are kept.
    pub(crate) fn config_with_options(config: SessionConfig) -> SessionConfig {
        fn with_default<T: ConfigExtension + Default>(config: SessionConfig) -> SessionConfig {
            if config.options().extensions.get::<T>().is_some() {
                config
            } else {
                config.with_option_extension(T::default())
            }
        }
        let config = with_default::<JobParameters>(config);
        let config = with_default::<TableOptions>(config);
        let config = with_default::<StateBackendConfig>(config);
        with_default::<CheckpointConfig>(config)
    }

    /// This session with its DataFusion state replaced by `change` of it (a cluster client
    /// swaps the query planner); the catalog and watermarks stay shared, and the registered
    /// functions are registered on the new state again (a change may reset its function list).
    pub(crate) fn with_state(
        mut self,
        change: impl FnOnce(SessionState) -> Result<SessionState>,
    ) -> Result<Self> {
        self.context = SessionContext::new_with_state(change(self.context.state())?);
        for entry in self.catalog.entries() {
            EngineFunction::new(&entry.name, &entry.function, entry.spec, &self.metrics)?
                .register(&self.context);
        }
        Ok(self)
    }

    /// The registry of user-defined functions, for the cluster codecs.
    pub(crate) fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The underlying DataFusion context.
    pub fn context(&self) -> &SessionContext {
        &self.context
    }

    /// Registers a function under its default name (the Rust name, or `name = "..."`).
    pub fn register(&self, function: impl UserFunction) -> Result<()> {
        let settings = function.settings();
        let function = function.into_function();
        let name = function.spec().name;
        self.register_function(&name, function, settings)
    }

    /// Registers a function (for example a parameterized instance) under `name`.
    pub fn register_as(&self, name: &str, function: impl UserFunction) -> Result<()> {
        let settings = function.settings();
        self.register_function(name, function.into_function(), settings)
    }

    fn register_function(
        &self,
        name: &str,
        function: Function,
        settings: Option<Vec<u8>>,
    ) -> Result<()> {
        if !is_identifier(name) {
            return plan_err!("`{name}` is not a valid function name: use letters, digits and `_`");
        }
        let name = normalize(name);
        if SQL_SYNTAX_NAMES.contains(&name.as_str()) {
            return plan_err!(
                "`{name}` cannot name a function: SQL parses `{}(...)` as its own syntax, so calls would never reach it",
                name.to_uppercase()
            );
        }
        let spec = Arc::new(function.spec());
        let engine = EngineFunction::new(&name, &function, spec.clone(), &self.metrics)?;
        self.catalog
            .insert(CatalogEntry {
                name: name.clone(),
                spec,
                function,
                settings,
            })
            .map_err(|e| plan_datafusion_err!("{e}"))?;
        engine.register(&self.context);
        Ok(())
    }

    /// Removes a function; `false` if no function has that name.
    pub fn drop_function(&self, name: &str) -> bool {
        match self.catalog.remove(name) {
            Some(entry) => {
                EngineFunction::deregister(&self.context, &entry.name, entry.spec.kind);
                true
            }
            None => false,
        }
    }

    /// Every registered function with its signatures, ordered by name.
    pub fn functions(&self) -> Vec<FunctionInfo> {
        self.catalog.list()
    }

    /// Runs one SQL statement; calls of registered functions may name their arguments
    /// (`f(a => 1, b => 'x')`) and leave out optional ones.
    pub async fn sql(&self, sql: &str) -> Result<DataFrame> {
        if let Some((key, value)) = set_option::parse(sql) {
            self.set_option(&key, &value)?;
            return self.context.read_empty();
        }
        // Flink's `WATERMARK FOR ts AS ts - INTERVAL ...` in CREATE TABLE.
        if let Some((statement, watermark)) = watermark_ddl::extract(sql)? {
            let created = Box::pin(self.sql(&statement)).await?;
            // A clause on a column the table does not have, or not of a time type, is the
            // statement's error: the table is not kept.
            if let Err(error) = watermark_ddl::check(&self.context, &watermark).await {
                self.context
                    .deregister_table(watermark.reference.as_str())?;
                return Err(error);
            }
            self.declare_watermark(&watermark.table, &watermark.column, watermark.delay);
            return Ok(created);
        }
        let state = self.context.state();
        let mut parsed = parse_statement(&state, sql)?;
        statement::prepare(&mut parsed, &self.catalog)?;
        let plan = state.statement_to_plan(parsed).await?;
        self.context.execute_logical_plan(plan).await
    }

    /// A call of a registered function with positional arguments, for the DataFrame API.
    pub fn call(&self, name: &str, args: impl IntoIterator<Item = Expr>) -> Result<Expr> {
        self.call_bound(name, args.into_iter().map(|arg| (None, arg)).collect())
    }

    /// A call with named arguments (any order; optional ones may be left out).
    pub fn call_named<'a>(
        &self,
        name: &str,
        args: impl IntoIterator<Item = (&'a str, Expr)>,
    ) -> Result<Expr> {
        let args = args
            .into_iter()
            .map(|(n, arg)| {
                let name = ArgName {
                    value: n.to_owned(),
                    quoted: false,
                };
                (Some(name), arg)
            })
            .collect();
        self.call_bound(name, args)
    }

    /// The registered function `name`.
    fn registered(&self, name: &str) -> Result<CatalogEntry> {
        self.catalog
            .get(name)
            .ok_or_else(|| plan_datafusion_err!("no function named `{name}` is registered"))
    }

    /// `args` bound to `entry`'s parameters (omitted optional ones are NULL).
    fn bind(entry: &CatalogEntry, args: Vec<(Option<ArgName>, Expr)>) -> Result<Vec<Expr>> {
        arguments::bind(&entry.name, &entry.spec, args, |_| lit(ScalarValue::Null))
            .map_err(|e| plan_datafusion_err!("{e}"))
    }

    fn call_bound(&self, name: &str, args: Vec<(Option<ArgName>, Expr)>) -> Result<Expr> {
        let entry = self.registered(name)?;
        let args = Self::bind(&entry, args)?;
        EngineFunction::registered(&self.context, &entry.name, entry.spec.kind)?
            .call(&entry.name, args)
    }

    /// A call of a function that is not registered (Flink's `call(MyFunction.class, ...)`).
    pub fn call_inline(
        &self,
        function: impl UserFunction,
        args: impl IntoIterator<Item = Expr>,
    ) -> Result<Expr> {
        let function = function.into_function();
        let spec = Arc::new(function.spec());
        // The engine merges equal-looking calls by function name, so each inline instance
        // gets a name of its own (two differently configured instances must stay apart).
        let n = self.inline_calls.fetch_add(1, Ordering::Relaxed) + 1;
        let name = format!("{}_inline_{n}", normalize(&spec.name));
        EngineFunction::new(&name, &function, spec, &self.metrics)?
            .call(&name, args.into_iter().collect())
    }

    /// A call of the registered table aggregate `name`, for
    /// [`flat_aggregate`](crate::FlatAggregate::flat_aggregate).
    pub fn table_aggregate(
        &self,
        name: &str,
        args: impl IntoIterator<Item = Expr>,
    ) -> Result<TableAggregateCall> {
        let entry = self.registered(name)?;
        let args = Self::bind(&entry, args.into_iter().map(|arg| (None, arg)).collect())?;
        table_aggregate_call(entry.name, entry.spec, &entry.function, args)
    }

    /// A call of the registered process table function `name`, for
    /// [`Process::process`](crate::Process::process); `args` are its scalar arguments by
    /// position (more can be named with [`ProcessTableCall::arg`]).
    pub fn process_table(
        &self,
        name: &str,
        args: impl IntoIterator<Item = Expr>,
    ) -> Result<ProcessTableCall> {
        let entry = self.registered(name)?;
        process_table_call(entry.name, entry.spec, &entry.function, self, args)
    }

    /// A call of a process table function that is not registered.
    pub fn process_table_inline(
        &self,
        function: impl UserFunction,
        args: impl IntoIterator<Item = Expr>,
    ) -> Result<ProcessTableCall> {
        let function = function.into_function();
        let spec = Arc::new(function.spec());
        let name = normalize(&spec.name);
        process_table_call(name, spec, &function, self, args)
    }

    /// A call of a table aggregate that is not registered (Flink's `call(Top2.class, ...)`).
    pub fn table_aggregate_inline(
        &self,
        function: impl UserFunction,
        args: impl IntoIterator<Item = Expr>,
    ) -> Result<TableAggregateCall> {
        let function = function.into_function();
        let spec = Arc::new(function.spec());
        let name = normalize(&spec.name);
        table_aggregate_call(name, spec, &function, args.into_iter().collect())
    }

    /// A call of the registered table function `name`, for
    /// [`join_lateral`](crate::JoinLateral::join_lateral) and
    /// [`left_outer_join_lateral`](crate::JoinLateral::left_outer_join_lateral).
    pub fn table_function(
        &self,
        name: &str,
        args: impl IntoIterator<Item = Expr>,
    ) -> Result<TableFunctionCall> {
        let entry = self.registered(name)?;
        let args = Self::bind(&entry, args.into_iter().map(|arg| (None, arg)).collect())?;
        self.table_function_call(entry.name, entry.spec, &entry.function, args)
    }

    /// A call of a table function that is not registered (Flink's
    /// `call(SplitFunction.class, $("myField"))`).
    pub fn table_function_inline(
        &self,
        function: impl UserFunction,
        args: impl IntoIterator<Item = Expr>,
    ) -> Result<TableFunctionCall> {
        let function = function.into_function();
        let spec = Arc::new(function.spec());
        let name = normalize(&spec.name);
        self.table_function_call(name, spec, &function, args.into_iter().collect())
    }

    fn table_function_call(
        &self,
        name: String,
        spec: Arc<FunctionSpec>,
        function: &Function,
        args: Vec<Expr>,
    ) -> Result<TableFunctionCall> {
        match TableFunctionImpl::of(function) {
            Some(f) => Ok(TableFunctionCall::new(
                name,
                spec,
                f,
                args,
                self.metrics.clone(),
            )),
            None => plan_err!("`{name}` is a {} function, not a table function", spec.kind),
        }
    }

    /// Sets a configuration option, as SQL's `SET 'key' = 'value'` does: Flink's async
    /// options (`table.exec.async-scalar.timeout`, ...), job parameters (`job.<name>`) or
    /// DataFusion's own (`datafusion.execution.batch_size`). Keys and values are checked.
    pub fn set_option(&self, key: &str, value: &str) -> Result<()> {
        let state = self.context.state_ref();
        let mut state = state.write();
        state.config_mut().options_mut().set(key, value)
    }

    /// Sets a global job parameter, which functions read in `open`
    /// (`context.get_job_parameter(name, default)`). SQL: `SET job.<name> = '<value>'`.
    pub fn set_job_parameter(&self, name: &str, value: &str) {
        let state = self.context.state_ref();
        let mut state = state.write();
        if let Some(parameters) = state
            .config_mut()
            .options_mut()
            .extensions
            .get_mut::<JobParameters>()
        {
            parameters.insert(name, value);
        }
    }

    /// Registers table `name` that the application feeds while a query reads it (an
    /// unbounded source): send batches of `schema` with the returned [`Feed`], drop or
    /// close it to end the input. One query may read it.
    pub fn register_feed(
        &self,
        name: &str,
        schema: udf_core::arrow::datatypes::SchemaRef,
    ) -> Result<crate::Feed> {
        let (table, feed) = feed::fed_table(name, schema);
        self.context.register_table(name, Arc::new(table))?;
        Ok(feed)
    }

    /// Registers fed table `name` whose rows are a changelog: `schema`'s columns, then the
    /// row-kind column `op` (`+I`, `-U`, `+U`, `-D`; see [`crate::changelog`]). Batches
    /// sent carry all of them; a GROUP BY over the table retracts the `-U` and `-D` rows.
    pub fn register_changelog_feed(
        &self,
        name: &str,
        schema: udf_core::arrow::datatypes::SchemaRef,
    ) -> Result<crate::Feed> {
        if schema
            .fields()
            .iter()
            .any(|f| f.name() == crate::changelog::OP_COLUMN)
        {
            return plan_err!(
                "changelog table `{name}` has a column named `{}`, the name of its row-kind column; rename it",
                crate::changelog::OP_COLUMN
            );
        }
        let schema = Arc::new(crate::changelog::with_row_kind(&schema));
        self.register_feed(name, schema)
    }

    /// Registers table `name`: the changelog that the `debezium-json` files at `path` hold
    /// (a file, or a directory of them in name order; Flink's format), as rows of `schema`
    /// with the row-kind column `op`. The files are read now, into memory.
    pub fn register_debezium_json(
        &self,
        name: &str,
        path: impl AsRef<std::path::Path>,
        schema: udf_core::arrow::datatypes::SchemaRef,
    ) -> Result<()> {
        let changes = crate::changelog::debezium::read(path.as_ref(), &schema)?;
        let table =
            datafusion::datasource::MemTable::try_new(changes.schema(), vec![vec![changes]])?;
        self.context.register_table(name, Arc::new(table))?;
        Ok(())
    }

    /// Declares the watermark of `table`'s time column `column`: `max(column seen) - delay`,
    /// emitted after every row (SQL: `WATERMARK FOR ts AS ts - INTERVAL '2' SECOND`). A PTF
    /// call names the column with `on_time => DESCRIPTOR(column)`.
    pub fn declare_watermark(&self, table: &str, column: &str, delay: std::time::Duration) {
        self.declare_watermark_with(table, column, delay, WatermarkEmission::EveryRow);
    }

    /// [`Session::declare_watermark`] with a choice of when the watermark is emitted.
    pub fn declare_watermark_with(
        &self,
        table: &str,
        column: &str,
        delay: std::time::Duration,
        emission: WatermarkEmission,
    ) {
        self.watermarks.declare(
            table,
            WatermarkSpec {
                column: column.to_owned(),
                delay,
                emission,
            },
        );
    }

    /// The processing-time clock state TTL is measured on (the system clock by default);
    /// tests pass a `udf_core::ptf::ManualClock` to make expiry deterministic. A session on
    /// a Ballista cluster refuses it: the clock is an object of this process, and the
    /// executors measure on their own system clocks.
    pub fn set_processing_clock(&self, clock: Arc<dyn ProcessingClock>) -> Result<()> {
        let state = self.context.state_ref();
        let mut state = state.write();
        if crate::ballista::plans_for_a_cluster(state.config().options()) {
            return not_impl_err!(
                "a session on a Ballista cluster cannot set a processing clock: its executors measure processing time on their own system clocks"
            );
        }
        state
            .config_mut()
            .set_extension(Arc::new(SessionClock(clock)));
        Ok(())
    }

    /// Counters that functions registered through their `FunctionContext`.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}

fn process_table_call(
    name: String,
    spec: Arc<FunctionSpec>,
    function: &Function,
    session: &Session,
    args: impl IntoIterator<Item = Expr>,
) -> Result<ProcessTableCall> {
    match function {
        Function::Process(f) => Ok(ProcessTableCall {
            name,
            spec,
            function: f.clone(),
            metrics: session.metrics.clone(),
            watermarks: session.watermarks.clone(),
            positional: args.into_iter().collect(),
            named: Vec::new(),
            uid: None,
            on_time: None,
            tables: Vec::new(),
        }),
        _ => plan_err!(
            "`{name}` is a {} function, not a process table function",
            spec.kind
        ),
    }
}

fn table_aggregate_call(
    name: String,
    spec: Arc<FunctionSpec>,
    function: &Function,
    args: Vec<Expr>,
) -> Result<TableAggregateCall> {
    match function {
        Function::TableAggregate(f) => Ok(TableAggregateCall {
            name,
            spec,
            function: f.clone(),
            args,
            names: None,
            mode: EmitMode::Final,
            uid: None,
        }),
        _ => plan_err!(
            "`{name}` is a {} function, not a table aggregate",
            spec.kind
        ),
    }
}

/// One statement, parsed with our dialect when the session uses the generic one (the
/// default): it adds table arguments (`f(TABLE t PARTITION BY k)`) and nothing else.
/// DataFusion's rules with ours: one-phase aggregation where `merge` is missing, and — last,
/// once the plan has its final shape — the check that a checkpointed plan can be.
fn physical_optimizer_rules()
-> Vec<Arc<dyn datafusion::physical_optimizer::PhysicalOptimizerRule + Send + Sync>> {
    let mut rules = OnePhaseWithoutMerge::with_default_rules();
    rules.push(Arc::new(CheckpointedPlans));
    rules
}

fn parse_statement(state: &SessionState, sql: &str) -> Result<DfStatement> {
    let options = state.config().options();
    if options.sql_parser.dialect != Dialect::Generic {
        return state.sql_to_statement(sql, &options.sql_parser.dialect);
    }
    let mut statements = DFParserBuilder::new(sql)
        .with_dialect(&UdfDialect)
        .with_recursion_limit(options.sql_parser.recursion_limit.get())
        .build()?
        .parse_statements()?;
    match (statements.pop_front(), statements.is_empty()) {
        (Some(statement), true) => Ok(statement),
        (None, _) => plan_err!("no SQL statement was given"),
        (Some(_), false) => not_impl_err!("one SQL statement at a time, please"),
    }
}

/// Names the SQL parser turns into syntax of its own (`SUBSTRING(x FROM 1)`, `TRIM(...)`,
/// `CAST(...)`, ...) instead of function calls.
const SQL_SYNTAX_NAMES: &[&str] = &[
    "case",
    "cast",
    "ceil",
    "convert",
    "current_date",
    "current_time",
    "current_timestamp",
    "exists",
    "extract",
    "floor",
    "interval",
    "localtime",
    "localtimestamp",
    "not",
    "overlay",
    "position",
    "safe_cast",
    "substr",
    "substring",
    "trim",
    "try_cast",
    "try_convert",
];

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}
