//! The client's part of a query the cluster runs: the logical plan goes to the scheduler, the
//! client follows the job until it ends, then reads the result partitions from the executors
//! that wrote them.
//!
//! Ballista's own client exec (`DistributedQueryExec`) reads results through Flight's `do_get`,
//! for which the executor decodes each result file and encodes it again, lz4-compressed, batch
//! by batch, and it reads the partitions one after another. This exec asks for the files' bytes
//! as they lie (Ballista's block transport, as executors read each other's shuffle files) and
//! reads all partitions at once. Submitting the job and following it are as Ballista's: the
//! same messages, the same version header, the same settings sent along.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ballista_core::BALLISTA_VERSION;
use ballista_core::client::BallistaClient;
use ballista_core::extension::{BallistaConfigGrpcEndpoint, SessionConfigExt};
use ballista_core::serde::protobuf::execute_query_params::Query;
use ballista_core::serde::protobuf::get_job_status_result::FlightProxy;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::protobuf::{
    ExecuteQueryParams, GetJobStatusResult, KeyValuePair, PartitionLocation, SuccessfulJob,
    job_status,
};
use ballista_core::utils::{GrpcClientConfig, create_grpc_client_endpoint};
use ballista_core::version::{check_compatibility, insert_version_header, version_from_metadata};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err, exec_err, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use datafusion::prelude::SessionConfig;
use datafusion_proto::logical_plan::{AsLogicalPlan, LogicalExtensionCodec};
use datafusion_proto::protobuf::LogicalPlanNode;
use futures::{StreamExt, TryStreamExt, stream};
use prost::Message;

/// Numbers the queries this client submits.
static OPERATIONS: AtomicU64 = AtomicU64::new(0);

/// A query the cluster runs; its one output partition is every result partition's rows, in
/// whatever order they arrive (the plan's order, when it has one, is that of a single result
/// partition).
pub struct ClusterQueryExec {
    plan: LogicalPlan,
    codec: Arc<dyn LogicalExtensionCodec>,
    /// `http://host:port`
    scheduler: String,
    session_id: String,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl fmt::Debug for ClusterQueryExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterQueryExec")
            .field("scheduler", &self.scheduler)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl ClusterQueryExec {
    pub fn new(
        plan: LogicalPlan,
        config: &SessionConfig,
        scheduler: String,
        session_id: String,
    ) -> ClusterQueryExec {
        let schema: SchemaRef = Arc::new(plan.schema().as_arrow().clone());
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        ClusterQueryExec {
            plan,
            codec: config.ballista_logical_extension_codec(),
            scheduler,
            session_id,
            properties: Arc::new(properties),
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// The job's submission: the encoded plan and every setting of the session.
    fn query(&self, config: &SessionConfig) -> Result<ExecuteQueryParams> {
        let node = LogicalPlanNode::try_from_logical_plan(&self.plan, self.codec.as_ref())?;
        let settings = config
            .options()
            .entries()
            .into_iter()
            .map(|entry| KeyValuePair {
                key: entry.key,
                value: entry.value,
            })
            .collect();
        Ok(ExecuteQueryParams {
            query: Some(Query::LogicalPlan(node.encode_to_vec())),
            settings,
            session_id: self.session_id.clone(),
            // Only the scheduler's log shows it.
            operation_id: format!(
                "{}/{}",
                self.session_id,
                OPERATIONS.fetch_add(1, Ordering::Relaxed)
            ),
        })
    }
}

impl DisplayAs for ClusterQueryExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ClusterQueryExec: scheduler={}", self.scheduler)
    }
}

impl ExecutionPlan for ClusterQueryExec {
    fn name(&self) -> &str {
        "ClusterQueryExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !children.is_empty() {
            return internal_err!("ClusterQueryExec takes no inputs");
        }
        Ok(self)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return internal_err!("ClusterQueryExec has one partition, not {partition}");
        }
        let config = context.session_config().clone();
        let query = self.query(&config)?;
        let scheduler = self.scheduler.clone();
        let rows = MetricBuilder::new(&self.metrics).output_rows(partition);
        let results = stream::once(async move {
            let (locations, proxy) = run_job(&scheduler, &config, query).await?;
            Ok::<_, DataFusionError>(fetch_all(&scheduler, &config, locations, proxy))
        })
        .try_flatten()
        .inspect_ok(move |batch| rows.add(batch.num_rows()));
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.properties.eq_properties.schema().clone(),
            results,
        )))
    }
}

type Scheduler = SchedulerGrpcClient<
    tonic::service::interceptor::InterceptedService<
        tonic::transport::Channel,
        ballista_core::extension::BallistaGrpcMetadataInterceptor,
    >,
>;

async fn connect(scheduler: &str, config: &SessionConfig) -> Result<Scheduler> {
    let ballista = config.ballista_config();
    let mut endpoint = create_grpc_client_endpoint(
        scheduler.to_owned(),
        Some(&GrpcClientConfig::from(&ballista)),
    )
    .map_err(|e| exec_datafusion_err!("the scheduler's address {scheduler}: {e}"))?;
    if let Some(customize) = config.ballista_override_create_grpc_client_endpoint() {
        endpoint = customize
            .configure_endpoint(endpoint)
            .map_err(|e| exec_datafusion_err!("the scheduler's endpoint {scheduler}: {e}"))?;
    }
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| exec_datafusion_err!("connecting to the scheduler at {scheduler}: {e:?}"))?;
    let size = ballista.grpc_client_max_message_size();
    Ok(SchedulerGrpcClient::with_interceptor(
        channel,
        config.ballista_grpc_interceptor().as_ref().clone(),
    )
    .max_encoding_message_size(size)
    .max_decoding_message_size(size))
}

/// Submits the query and follows its job (the scheduler pushes each change of status) to its
/// end: where its result partitions lie, or its error.
async fn run_job(
    address: &str,
    config: &SessionConfig,
    query: ExecuteQueryParams,
) -> Result<(Vec<PartitionLocation>, Option<FlightProxy>)> {
    let mut scheduler = connect(address, config).await?;
    let mut request = tonic::Request::new(query);
    insert_version_header(request.metadata_mut());
    let response = scheduler
        .execute_query_push(request)
        .await
        .map_err(|e| exec_datafusion_err!("the scheduler at {address} took no query: {e}"))?;
    check_compatibility(
        Some(BALLISTA_VERSION),
        version_from_metadata(response.metadata()),
    )
    .map_err(DataFusionError::Execution)?;
    let mut statuses = response.into_inner();
    let mut job_id = None;
    loop {
        let Some(update) = statuses.next().await else {
            return exec_err!(
                "the scheduler at {address} stopped reporting on job {} before it ended",
                job_id.as_deref().unwrap_or("(not yet numbered)")
            );
        };
        let GetJobStatusResult {
            status,
            flight_proxy,
        } = update.map_err(|e| exec_datafusion_err!("following the job at {address}: {e}"))?;
        let Some(status) = status else { continue };
        job_id = Some(status.job_id.clone());
        match status.status {
            Some(job_status::Status::Failed(failed)) => {
                return exec_err!("Job {} failed: {}", status.job_id, failed.error);
            }
            Some(job_status::Status::Successful(SuccessfulJob {
                partition_location, ..
            })) => return Ok((partition_location, flight_proxy)),
            _ => {}
        }
    }
}

/// Every result partition's rows, read from all partitions at once.
fn fetch_all(
    scheduler: &str,
    config: &SessionConfig,
    locations: Vec<PartitionLocation>,
    proxy: Option<FlightProxy>,
) -> impl futures::Stream<Item = Result<RecordBatch>> + use<> {
    // Worked out once for the query, shared by its partitions' fetches.
    let reader = Arc::new(ResultReader {
        scheduler: scheduler.to_owned(),
        grpc: GrpcClientConfig::from(&config.ballista_config()),
        use_tls: config.ballista_use_tls(),
        endpoint: config.ballista_override_create_grpc_client_endpoint(),
        proxy,
    });
    let partitions = locations.into_iter().map(|location| {
        let fetch = Arc::clone(&reader).fetch(location);
        stream::once(fetch).try_flatten().boxed()
    });
    stream::select_all(partitions)
}

/// How this client reaches the executors (or the proxy the scheduler names) for results.
struct ResultReader {
    /// `http://host:port`
    scheduler: String,
    grpc: GrpcClientConfig,
    use_tls: bool,
    endpoint: Option<Arc<BallistaConfigGrpcEndpoint>>,
    proxy: Option<FlightProxy>,
}

impl ResultReader {
    /// One result partition's rows, its file's bytes as they lie on the executor.
    async fn fetch(
        self: Arc<Self>,
        location: PartitionLocation,
    ) -> Result<SendableRecordBatchStream> {
        let layout = location.layout();
        let (Some(executor), Some(partition)) = (location.executor_meta, location.partition_id)
        else {
            return internal_err!("the scheduler named a result partition without its place");
        };
        let (host, port) = match &self.proxy {
            Some(FlightProxy::External(address)) => host_port(&format!("http://{address}"))?,
            Some(FlightProxy::Local(true)) => host_port(&self.scheduler)?,
            Some(FlightProxy::Local(false)) | None => (executor.host.clone(), executor.port as u16),
        };
        let grpc = &self.grpc;
        let mut client = BallistaClient::try_new(
            &host,
            port,
            grpc.max_message_size,
            self.use_tls,
            self.endpoint.clone(),
            grpc.io_retries_times,
            grpc.io_retry_wait_time_ms,
            grpc.initial_connection_window_size,
            grpc.initial_stream_window_size,
        )
        .await
        .map_err(|e| {
            exec_datafusion_err!("reaching executor {} at {host}:{port}: {e}", executor.id)
        })?;
        client
            .fetch_partition_proxied(
                &executor.id,
                &partition.into(),
                location.file_id,
                layout,
                &executor.host,
                executor.port as u16,
                false,
            )
            .await
            .map_err(|e| e.into_datafusion())
    }
}

fn host_port(address: &str) -> Result<(String, u16)> {
    let rest = address.split_once("://").map_or(address, |(_, rest)| rest);
    let rest = rest.trim_end_matches('/');
    match rest
        .rsplit_once(':')
        .map(|(host, port)| (host, port.parse::<u16>()))
    {
        Some((host, Ok(port))) if !host.is_empty() => Ok((host.to_owned(), port)),
        _ => Err(DataFusionError::Execution(format!(
            "`{address}` is not a host and port to fetch results from"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::host_port;

    #[test]
    fn a_proxy_address_is_a_host_and_a_port() {
        assert_eq!(
            host_port("http://proxy.local:50051").unwrap(),
            ("proxy.local".to_owned(), 50051)
        );
        assert_eq!(
            host_port("http://localhost:50050/").unwrap(),
            ("localhost".to_owned(), 50050)
        );
        for address in ["http://proxy.local", "http://:50051", "http://host:port"] {
            let error = host_port(address).unwrap_err().to_string();
            assert!(
                error.contains(&format!("`{address}` is not a host and port")),
                "{address}: {error}"
            );
        }
    }
}
