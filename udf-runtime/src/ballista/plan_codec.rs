//! A session's plans in the form a Ballista cluster receives them, for a test that a query
//! survives the trip, or to keep a plan.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::dataframe::DataFrame;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::{ExecutionPlan, displayable};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};

use super::Codecs;
use crate::Session;

/// Encodes and decodes plans with the codecs a cluster uses, resolving functions against one
/// session's catalog.
pub struct PlanCodec {
    codecs: Codecs,
    task: Arc<TaskContext>,
}

impl PlanCodec {
    pub fn of(session: &Session) -> PlanCodec {
        PlanCodec {
            codecs: Codecs::of(session),
            task: session.context().task_ctx(),
        }
    }

    pub fn encode_logical(&self, plan: &LogicalPlan) -> Result<Vec<u8>> {
        Ok(
            logical_plan_to_bytes_with_extension_codec(plan, self.codecs.logical.as_ref())?
                .to_vec(),
        )
    }

    pub fn decode_logical(&self, bytes: &[u8]) -> Result<LogicalPlan> {
        logical_plan_from_bytes_with_extension_codec(
            bytes,
            &self.task,
            self.codecs.logical.as_ref(),
        )
    }

    pub fn encode_physical(&self, plan: Arc<dyn ExecutionPlan>) -> Result<Vec<u8>> {
        Ok(
            physical_plan_to_bytes_with_extension_codec(plan, self.codecs.physical.as_ref())?
                .to_vec(),
        )
    }

    pub fn decode_physical(&self, bytes: &[u8]) -> Result<Arc<dyn ExecutionPlan>> {
        physical_plan_from_bytes_with_extension_codec(
            bytes,
            &self.task,
            self.codecs.physical.as_ref(),
        )
    }

    /// A query's optimized logical plan and physical plan, each encoded and decoded as a
    /// cluster does; the first error on the way.
    pub async fn round_trip(&self, query: DataFrame) -> Result<RoundTrip> {
        let logical = query.clone().into_optimized_plan()?;
        let logical_back = self.decode_logical(&self.encode_logical(&logical)?)?;
        let physical = query.create_physical_plan().await?;
        let physical_back = self.decode_physical(&self.encode_physical(physical.clone())?)?;
        Ok(RoundTrip {
            logical,
            logical_back,
            physical,
            physical_back,
        })
    }
}

/// A query's plans, and what came back of them through a cluster's codecs.
pub struct RoundTrip {
    pub logical: LogicalPlan,
    pub logical_back: LogicalPlan,
    pub physical: Arc<dyn ExecutionPlan>,
    pub physical_back: Arc<dyn ExecutionPlan>,
}

impl RoundTrip {
    /// The physical plan's full display, with schemas: execution plans have no equality, so
    /// two that display the same are taken for the same.
    pub fn shown(plan: &Arc<dyn ExecutionPlan>) -> String {
        displayable(plan.as_ref())
            .set_show_schema(true)
            .indent(true)
            .to_string()
    }
}
