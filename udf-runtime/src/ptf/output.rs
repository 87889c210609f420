//! The output batches of a processor: the columns that come from the input row (PARTITION
//! BY keys, or every column when passed through), taken by the row that emitted, then the
//! function's columns, then the emitting row's time (`rowtime`) with event time.

use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch, UInt32Array};
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::SchemaRef;
use udf_core::{Error, RowSink};

pub struct OutputSink<'a> {
    /// Input columns copied into the output, row by row.
    pub prefix: &'a [ArrayRef],
    /// Input columns copied after the function's (`rowtime`).
    pub suffix: &'a [ArrayRef],
    pub row_is_struct: bool,
    pub schema: &'a SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl RowSink for OutputSink<'_> {
    fn accept(&mut self, rows: ArrayRef, owners: Vec<usize>) -> Result<(), Error> {
        let indices = UInt32Array::from_iter_values(owners.iter().map(|&o| o as u32));
        let mut columns = self
            .prefix
            .iter()
            .map(|column| take(column.as_ref(), &indices, None))
            .collect::<Result<Vec<_>, _>>()?;
        if self.row_is_struct {
            columns.extend(rows.as_struct().columns().iter().cloned());
        } else {
            columns.push(rows);
        }
        for column in self.suffix {
            columns.push(take(column.as_ref(), &indices, None)?);
        }
        self.batches
            .push(RecordBatch::try_new(self.schema.clone(), columns)?);
        Ok(())
    }
}
