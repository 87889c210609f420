//! A table aggregate's changelog over unbounded input with checkpoints on: one partition of
//! it as a keyed operator that the router feeds by group key (`checkpoint/operator.rs`),
//! saving its groups' accumulators at each checkpoint.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result};
use datafusion::physical_expr::PhysicalExpr;

use super::aggregation::{EmitMode, TableAggregation};
use super::batches::{output_batch, push};
use crate::checkpoint::operator::{KeyedOperator, Rows};
use crate::streaming::state::KeepKeys;

/// What one partition of the exec runs with.
pub(super) struct Partition {
    pub aggregation: TableAggregation,
    pub schema: SchemaRef,
    pub group_by: Vec<Arc<dyn PhysicalExpr>>,
    pub args: Vec<Arc<dyn PhysicalExpr>>,
    pub row_is_struct: bool,
    pub mode: EmitMode,
    /// The function's name, for errors.
    pub name: String,
}

impl KeyedOperator for Partition {
    fn name(&self) -> &str {
        &self.name
    }

    fn push(&mut self, rows: Rows<'_>) -> Result<Vec<RecordBatch>> {
        let output = push(
            &mut self.aggregation,
            &self.group_by,
            &self.args,
            rows.batch,
        )?;
        match output {
            Some(output) if !output.kinds.is_empty() => Ok(vec![output_batch(
                &self.schema,
                output,
                self.row_is_struct,
                self.mode,
            )?]),
            _ => Ok(Vec::new()),
        }
    }

    fn finish(&mut self) -> Result<Vec<RecordBatch>> {
        let output = self
            .aggregation
            .finish()
            .map_err(DataFusionError::Execution)?;
        let batch = output_batch(&self.schema, output, self.row_is_struct, self.mode)?;
        Ok(vec![batch])
    }

    fn snapshot(&mut self) -> Result<Vec<u8>> {
        self.aggregation
            .snapshot()
            .map_err(DataFusionError::Execution)
    }

    fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        self.aggregation
            .restore(snapshot, keep)
            .map_err(DataFusionError::Execution)
    }
}
