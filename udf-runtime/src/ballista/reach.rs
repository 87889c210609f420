//! A client's queries that cannot reach the scheduler fail saying so: Ballista reports the
//! transport's error as its debug text, so the client's planner wraps each plan in an exec
//! that rewrites a failed connection as an error naming the scheduler's address.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, internal_err};
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::{StreamExt, TryStreamExt};

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

/// Whether `error` is a failed connection (tonic's connect error, as Ballista prints it).
fn unreachable(error: &DataFusionError) -> bool {
    let text = error.to_string();
    text.contains("ConnectError") || text.contains("tcp connect error")
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
        let stream = stream.map_err(move |error| {
            if unreachable(&error) {
                DataFusionError::Execution(format!(
                    "cannot reach the Ballista scheduler at {scheduler}: is it running, and is \
                     the address right? ({error})"
                ))
            } else {
                error
            }
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            stream.boxed(),
        )))
    }
}
