//! After the shuffle: a processor's stamped rows turned back into the messages the local
//! router sends — each source's rows with the watermark before each, its advances and its
//! end (the protocol: `mod.rs`).

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{Int8Type, Int64Type, Schema, SchemaRef, UInt32Type};
use datafusion::common::{Result, exec_err, internal_err};

use super::{ADVANCE, END, ROW, STAMP_COLUMNS};
use crate::ops::routing::routed::Routed;
use crate::ops::routing::source_watermark::time_millis;
use crate::streaming::event_time::EventTime;

/// One table's stamped rows arriving at one processor.
pub(crate) struct Unstamp {
    /// The function, for errors.
    function: String,
    /// The number of the table's first source among all tables' sources.
    offset: usize,
    /// Which sources have ended.
    ended: Vec<bool>,
    /// This processor's route value, and its number.
    route: i64,
    processor: usize,
    event_time: Option<EventTime>,
    /// The table's own columns, once seen.
    schema: Option<SchemaRef>,
}

impl Unstamp {
    pub fn new(
        function: &str,
        offset: usize,
        sources: usize,
        route: i64,
        processor: usize,
        event_time: Option<EventTime>,
    ) -> Self {
        Unstamp {
            function: function.to_string(),
            offset,
            ended: vec![false; sources],
            route,
            processor,
            event_time,
            schema: None,
        }
    }

    /// A stamped batch's messages, in order, with the processing time `now`.
    pub fn messages(&mut self, batch: &RecordBatch, now: i64, out: &mut Vec<Routed>) -> Result<()> {
        let own = batch.num_columns().saturating_sub(STAMP_COLUMNS);
        let column = |i: usize| batch.column(own + i);
        let (Some(routes), Some(sources), Some(marks), Some(values)) = (
            column(0).as_primitive_opt::<Int64Type>(),
            column(1).as_primitive_opt::<UInt32Type>(),
            column(2).as_primitive_opt::<Int8Type>(),
            column(3).as_primitive_opt::<Int64Type>(),
        ) else {
            return internal_err!("`{}`: an input arrived unstamped", self.function);
        };
        if let Some(row) = routes.values().iter().position(|&r| r != self.route) {
            return internal_err!(
                "`{}`: row {row} of a batch reached processor {} with the route of another (the cluster's shuffle and the stamp disagree)",
                self.function,
                self.processor
            );
        }
        let schema = self
            .schema
            .get_or_insert_with(|| Arc::new(Schema::new(batch.schema().fields()[..own].to_vec())))
            .clone();
        let rows = batch.num_rows();
        let mut row = 0;
        while row < rows {
            let source = sources.value(row) as usize;
            if source >= self.ended.len() {
                return exec_err!(
                    "`{}`: rows arrived from source partition {source} of an input planned with {} source partitions",
                    self.function,
                    self.ended.len()
                );
            }
            if self.ended[source] {
                return internal_err!(
                    "`{}`: source partition {source} sent rows after its end",
                    self.function
                );
            }
            let id = self.offset + source;
            match marks.value(row) {
                ROW => {
                    let end = (row..rows)
                        .find(|&r| marks.value(r) != ROW || sources.value(r) as usize != source)
                        .unwrap_or(rows);
                    // An advance right after a run of rows travels with them, as locally.
                    let after = (end < rows
                        && marks.value(end) == ADVANCE
                        && sources.value(end) as usize == source)
                        .then(|| values.value(end));
                    let slice = batch.slice(row, end - row);
                    let data =
                        RecordBatch::try_new(schema.clone(), slice.columns()[..own].to_vec())?;
                    let (times, before) = match &self.event_time {
                        Some(time) => {
                            let times = time_millis(data.column(time.column).as_ref(), &time.name)?;
                            let before = values.slice(row, end - row);
                            let before = (0..before.len())
                                .map(|i| before.is_valid(i).then(|| before.value(i)))
                                .collect();
                            (Some(times), Some(before))
                        }
                        None => (None, None),
                    };
                    out.push(Routed::Rows {
                        source: id,
                        batch: data,
                        times,
                        before,
                        after,
                        now,
                    });
                    row = if after.is_some() { end + 1 } else { end };
                }
                ADVANCE => {
                    out.push(Routed::Rows {
                        source: id,
                        batch: RecordBatch::new_empty(schema.clone()),
                        times: Some(Vec::new()),
                        before: Some(Vec::new()),
                        after: Some(values.value(row)),
                        now,
                    });
                    row += 1;
                }
                END => {
                    let planned = self.ended.len() as i64;
                    if values.value(row) != planned {
                        return exec_err!(
                            "`{}`: an input's partition count before the shuffle is {}, but it was planned with {planned}",
                            self.function,
                            values.value(row)
                        );
                    }
                    self.ended[source] = true;
                    out.push(Routed::End { source: id });
                    row += 1;
                }
                other => {
                    return internal_err!("`{}`: unknown stamp mark {other}", self.function);
                }
            }
        }
        Ok(())
    }

    /// At the end of the shuffled input: every source must have ended.
    pub fn finish(&self) -> Result<()> {
        match self.ended.iter().position(|ended| !ended) {
            Some(source) => exec_err!(
                "`{}`: the rows of source partition {source} of an input stopped without its end: an upstream task was lost",
                self.function
            ),
            None => Ok(()),
        }
    }
}
