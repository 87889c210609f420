//! One input of a PTF exec: what the exec and each processor know of a table argument.

use std::sync::Arc;

use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::ExecutionPlan;

/// One input of the exec: a table argument's plan (or one empty row, without a table), its
/// PARTITION BY keys (cast to the key types all tables share) and the function's row.
#[derive(Debug, Clone)]
pub struct PtfInput {
    pub plan: Arc<dyn ExecutionPlan>,
    pub keys: Vec<Arc<dyn PhysicalExpr>>,
    pub row: Vec<Arc<dyn PhysicalExpr>>,
    /// The row-kind column of a changelog table argument.
    pub kinds: Option<Arc<dyn PhysicalExpr>>,
}
