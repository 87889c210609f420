//! A changelog applied to a table: what a user wants to see at the end of an updating
//! query (Flink's "table" result mode). `+I` and `+U` add their row; `-U` and `-D` take
//! back one equal row added before.

use std::collections::HashMap;

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch};
use datafusion::arrow::compute::interleave;
use datafusion::arrow::datatypes::Schema;
use datafusion::arrow::row::{OwnedRow, RowConverter, SortField};
use datafusion::common::{Result, exec_err, plan_err};

use super::{retractions, row_kind_index};

/// The table `batches` (a changelog: each with the row-kind column) leave: its rows in the
/// order they were added, without the row-kind column. An error names a row that takes back
/// a row that is not there.
pub fn materialize(batches: &[RecordBatch]) -> Result<RecordBatch> {
    let Some(first) = batches.first() else {
        return plan_err!("a changelog of no batches has no schema to materialize");
    };
    let schema = first.schema();
    let Some(op) = row_kind_index(&schema) else {
        return plan_err!("the batches are not a changelog: they have no row-kind column");
    };
    let columns: Vec<usize> = (0..schema.fields().len()).filter(|&c| c != op).collect();
    let converter = RowConverter::new(
        columns
            .iter()
            .map(|&c| SortField::new(schema.field(c).data_type().clone()))
            .collect(),
    )?;
    // Live rows as (batch, row), in order of addition; `None` once taken back.
    let mut live: Vec<Option<(usize, usize)>> = Vec::new();
    let mut by_value: HashMap<OwnedRow, Vec<usize>> = HashMap::new();
    for (index, batch) in batches.iter().enumerate() {
        let values: Vec<ArrayRef> = columns.iter().map(|&c| batch.column(c).clone()).collect();
        let rows = converter.convert_columns(&values)?;
        let back = retractions(batch.column(op), "the changelog")?;
        for (row, &back) in back.iter().enumerate() {
            let value = rows.row(row).owned();
            if !back {
                by_value.entry(value).or_default().push(live.len());
                live.push(Some((index, row)));
                continue;
            }
            match by_value.get_mut(&value).and_then(Vec::pop) {
                Some(slot) => live[slot] = None,
                None => {
                    return exec_err!(
                        "row {row} of changelog batch {index} takes back a row the changelog never added"
                    );
                }
            }
        }
    }
    let kept: Vec<(usize, usize)> = live.into_iter().flatten().collect();
    let output = Schema::new(
        columns
            .iter()
            .map(|&c| schema.field(c).clone())
            .collect::<Vec<_>>(),
    );
    let mut out = Vec::with_capacity(columns.len());
    for &column in &columns {
        let sources: Vec<&dyn Array> = batches.iter().map(|b| b.column(column).as_ref()).collect();
        out.push(interleave(&sources, &kept)?);
    }
    Ok(RecordBatch::try_new_with_options(
        output.into(),
        out,
        &datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(kept.len())),
    )?)
}
