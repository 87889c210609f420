//! From input batches to the aggregation and from its output to batches: the keys and
//! arguments evaluated and folded in; the keys, the emitted row's columns and `op`.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result};
use datafusion::physical_expr::PhysicalExpr;

use super::aggregation::{EmitMode, Output, TableAggregation};
use crate::changelog;

/// Evaluates the keys and arguments of a batch and folds it in.
pub(super) fn push(
    aggregation: &mut TableAggregation,
    group_by: &[Arc<dyn PhysicalExpr>],
    args: &[Arc<dyn PhysicalExpr>],
    batch: &RecordBatch,
) -> Result<Option<Output>> {
    let rows = batch.num_rows();
    let evaluate = |exprs: &[Arc<dyn PhysicalExpr>]| {
        exprs
            .iter()
            .map(|e| e.evaluate(batch)?.into_array(rows))
            .collect::<Result<Vec<ArrayRef>>>()
    };
    aggregation
        .push(&evaluate(group_by)?, evaluate(args)?, rows)
        .map_err(DataFusionError::Execution)
}

/// An output batch: keys, the emitted row's columns, and `op` for a changelog.
pub(super) fn output_batch(
    schema: &SchemaRef,
    output: Output,
    row_is_struct: bool,
    mode: EmitMode,
) -> Result<RecordBatch> {
    let mut columns = output.keys;
    if row_is_struct {
        columns.extend(output.rows.as_struct().columns().iter().cloned());
    } else {
        columns.push(output.rows);
    }
    if mode == EmitMode::Changelog {
        columns.push(changelog::kinds_array(&output.kinds));
    }
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}
