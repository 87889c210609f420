//! A session's plans in the form a Ballista cluster receives them, for a test that a query
//! survives the trip, or to keep a plan.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
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
}
