//! The watermark of one input partition (a source): the largest row time seen, less the
//! declared delay. Both the local router and the stamp before a cluster's shuffle
//! (`shuffle/`) derive it here, so a processor hears the same watermarks either way.

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType as ArrowType, Int64Type, TimeUnit};
use datafusion::common::{Result, exec_err};

use crate::streaming::event_time::{EventTime, WatermarkEmission};

/// The row times of a batch and the source's watermark in force before each row.
pub(crate) struct BatchTimes {
    pub times: Vec<i64>,
    pub before: Vec<Option<i64>>,
}

/// One source's watermark as its rows pass.
#[derive(Debug, Clone)]
pub(crate) struct SourceWatermark {
    pub event_time: Option<EventTime>,
    /// The largest row time seen.
    pub max_time: Option<i64>,
}

impl SourceWatermark {
    pub fn new(event_time: Option<EventTime>) -> Self {
        SourceWatermark {
            event_time,
            max_time: None,
        }
    }

    /// The watermark now; `None` without a time attribute or before the first row.
    pub fn current(&self) -> Option<i64> {
        let delay = self.event_time.as_ref().map_or(0, |t| t.delay_millis);
        self.max_time.map(|t| t.saturating_sub(delay))
    }

    /// Takes a batch's rows: their times and the watermark before each (`None` without a
    /// time attribute). The watermark after the batch is then [`current`](Self::current).
    pub fn pass(&mut self, batch: &RecordBatch) -> Result<Option<BatchTimes>> {
        let Some(event_time) = &self.event_time else {
            return Ok(None);
        };
        let times = time_millis(batch.column(event_time.column).as_ref(), &event_time.name)?;
        let before = match event_time.emission {
            WatermarkEmission::EveryRow => {
                let mut before = Vec::with_capacity(times.len());
                for &time in &times {
                    before.push(self.current());
                    self.max_time = Some(self.max_time.map_or(time, |m| m.max(time)));
                }
                before
            }
            WatermarkEmission::EveryBatch => {
                let before = vec![self.current(); times.len()];
                if let Some(&latest) = times.iter().max() {
                    self.max_time = Some(self.max_time.map_or(latest, |m| m.max(latest)));
                }
                before
            }
        };
        Ok(Some(BatchTimes { times, before }))
    }
}

/// Time attribute `name`'s values as epoch milliseconds; NULL is an error.
pub(crate) fn time_millis(column: &dyn Array, name: &str) -> Result<Vec<i64>> {
    if column.null_count() > 0 {
        return exec_err!(
            "the time attribute `{name}` is NULL in a row; `on_time` columns need a time in every row"
        );
    }
    let tz = match column.data_type() {
        ArrowType::Timestamp(_, tz) => tz.clone(),
        other => {
            return exec_err!("the time attribute `{name}` is {other}, not a timestamp");
        }
    };
    let millis = cast(column, &ArrowType::Timestamp(TimeUnit::Millisecond, tz))?;
    let millis = cast(&millis, &ArrowType::Int64)?;
    Ok(millis.as_primitive::<Int64Type>().values().to_vec())
}
