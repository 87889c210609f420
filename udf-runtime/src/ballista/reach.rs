//! The client's planner: Ballista's, with the plans it sends to the cluster run by
//! [`ClusterQueryExec`]. A client's queries that cannot reach the scheduler fail saying so:
//! the transport's error comes as its debug text, so the planner wraps each plan in an exec
//! that, when the query fails, tries the scheduler's address itself: if nothing accepts a
//! connection there, the error names the address.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use ballista_core::execution_plans::DistributedQueryExec;
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, internal_err};
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use datafusion_proto::protobuf::LogicalPlanNode;
use futures::{StreamExt, TryStreamExt};

use super::cluster_query::ClusterQueryExec;

/// Ballista's client planner, with each plan wrapped in [`ReachingExec`].
#[derive(Debug)]
pub struct ReachingPlanner {
    pub inner: Arc<dyn QueryPlanner + Send + Sync>,
    pub scheduler: String,
}

#[async_trait]
impl QueryPlanner for ReachingPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = self
            .inner
            .create_physical_plan(logical_plan, session_state)
            .await?;
        // Ballista's planner runs some plans here (EXPLAIN ANALYZE's wrapper, the information
        // schema); the rest go to the cluster, through this project's client exec.
        let plan = if (plan.as_ref() as &dyn Any).is::<DistributedQueryExec<LogicalPlanNode>>() {
            Arc::new(ClusterQueryExec::new(
                logical_plan.clone(),
                session_state.config(),
                self.scheduler.clone(),
                session_state.session_id().to_owned(),
            ))
        } else {
            plan
        };
        Ok(Arc::new(ReachingExec {
            input: plan,
            scheduler: self.scheduler.clone(),
        }))
    }
}

/// Its input's rows; a failure to connect to the scheduler becomes an error naming it.
#[derive(Debug)]
pub struct ReachingExec {
    input: Arc<dyn ExecutionPlan>,
    scheduler: String,
}

/// The longest a check of the scheduler's address waits for a connection.
const PROBE: Duration = Duration::from_secs(5);

/// Why nothing accepts a connection at `scheduler` (`http://host:port`), or `None` if
/// something does.
async fn unreachable(scheduler: &str) -> Option<String> {
    let address = scheduler
        .split_once("://")
        .map_or(scheduler, |(_, rest)| rest)
        .split('/')
        .next()
        .unwrap_or_default();
    match tokio::time::timeout(PROBE, tokio::net::TcpStream::connect(address)).await {
        Ok(Ok(_)) => None,
        Ok(Err(error)) => Some(error.to_string()),
        Err(_) => Some(format!("no answer within {PROBE:?}")),
    }
}

impl DisplayAs for ReachingExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "BallistaClientExec: scheduler={}", self.scheduler)
    }
}

impl ExecutionPlan for ReachingExec {
    fn name(&self) -> &str {
        "BallistaClientExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("BallistaClientExec takes one input");
        }
        Ok(Arc::new(ReachingExec {
            input: children.swap_remove(0),
            scheduler: self.scheduler.clone(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let scheduler = self.scheduler.clone();
        let stream = self.input.execute(partition, context)?;
        let schema = stream.schema();
        let stream = stream.or_else(move |error| {
            let scheduler = scheduler.clone();
            async move {
                Err(match unreachable(&scheduler).await {
                    Some(why) => DataFusionError::Execution(format!(
                        "cannot reach the Ballista scheduler at {scheduler} ({why}): is it \
                         running, and is the address right? ({error})"
                    )),
                    None => error,
                })
            }
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            stream.boxed(),
        )))
    }
}
