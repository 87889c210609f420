//! The output batches of a processor: the columns that come from the row's origin — the
//! input row that emitted it (PARTITION BY keys, or every column when passed through), or
//! the timer that fired (its key) — then the function's columns, then the origin's time
//! (`rowtime`) with event time.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{interleave, take};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result};
use udf_core::{Error, Owners, RowSink};

/// What a call emitted, kept as it came until the call returns (rows emitted by timers
/// are assembled with what the timers fired, known only then).
#[derive(Default)]
pub struct CallOutput {
    /// The function's rows, a column per chunk, and each row's owner.
    pub chunks: Vec<(ArrayRef, Owners)>,
}

impl RowSink for CallOutput {
    fn accept(&mut self, rows: ArrayRef, owners: Owners) -> Result<(), Error> {
        self.chunks.push((rows, owners));
        Ok(())
    }
}

/// The columns around the function's, for owners `0..rows` (input rows) and from `rows` on
/// (fired timers, in firing order).
pub struct Origins<'a> {
    pub rows: usize,
    /// Input columns before the function's, and after (`rowtime`).
    pub prefix: &'a [ArrayRef],
    pub suffix: &'a [ArrayRef],
    /// Timers fired by the call, and the same columns for them: their keys, and their times.
    pub fired: usize,
    pub timer_prefix: &'a [ArrayRef],
    pub timer_suffix: &'a [ArrayRef],
}

impl Origins<'_> {
    /// One output batch of `rows` (the function's, one column of its row type) emitted by
    /// `owners`.
    pub fn batch(
        &self,
        rows: ArrayRef,
        owners: &Owners,
        row_is_struct: bool,
        schema: &SchemaRef,
    ) -> Result<RecordBatch> {
        let gather = Gather::new(owners, self.rows, self.fired);
        let mut columns = gather.columns(self.prefix, self.timer_prefix)?;
        if row_is_struct {
            columns.extend(rows.as_struct().columns().iter().cloned());
        } else {
            columns.push(rows);
        }
        columns.extend(gather.columns(self.suffix, self.timer_suffix)?);
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}

/// How to pick a chunk's rows out of the input's and the timers' columns.
enum Gather {
    /// Input rows `offset..offset + len`, one each: slices, nothing copied.
    InputRange(usize, usize),
    Input(UInt32Array),
    Timers(UInt32Array),
    /// (0 = input, 1 = timers; index) per row.
    Mixed(Vec<(usize, usize)>),
}

impl Gather {
    fn new(owners: &Owners, rows: usize, fired: usize) -> Gather {
        if let Some(range) = owners.range()
            && range.end <= rows
        {
            return Gather::InputRange(range.start, range.len());
        }
        // Without fired timers every row is an input row's: no need to look.
        let from_input = if fired == 0 {
            owners.len()
        } else {
            owners.iter().filter(|&o| o < rows).count()
        };
        if from_input == owners.len() {
            Gather::Input(UInt32Array::from_iter_values(
                owners.iter().map(|o| o as u32),
            ))
        } else if from_input == 0 {
            Gather::Timers(UInt32Array::from_iter_values(
                owners.iter().map(|o| (o - rows) as u32),
            ))
        } else {
            Gather::Mixed(
                owners
                    .iter()
                    .map(|o| if o < rows { (0, o) } else { (1, o - rows) })
                    .collect(),
            )
        }
    }

    /// The chunk's rows of each column, taken from `input` or `timers` (the same columns
    /// for the two origins; a side no row comes from may have none).
    fn columns(&self, input: &[ArrayRef], timers: &[ArrayRef]) -> Result<Vec<ArrayRef>> {
        let missing = || {
            DataFusionError::Internal(
                "output rows of a process table function have no origin columns".into(),
            )
        };
        Ok(match self {
            Gather::InputRange(offset, len) => input
                .iter()
                .map(|column| column.slice(*offset, *len))
                .collect(),
            Gather::Input(indices) => input
                .iter()
                .map(|column| take(column.as_ref(), indices, None))
                .collect::<Result<_, _>>()?,
            Gather::Timers(indices) => timers
                .iter()
                .map(|column| take(column.as_ref(), indices, None))
                .collect::<Result<_, _>>()?,
            Gather::Mixed(indices) => {
                if input.len() != timers.len() {
                    return Err(missing());
                }
                input
                    .iter()
                    .zip(timers)
                    .map(|(input, timer)| {
                        let sources: [&dyn Array; 2] = [input.as_ref(), timer.as_ref()];
                        interleave(&sources, indices)
                    })
                    .collect::<Result<_, _>>()?
            }
        })
    }
}
