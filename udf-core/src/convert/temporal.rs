//! Dates and times: chrono's `NaiveDate` (DATE), `NaiveTime` (TIME), `NaiveDateTime`
//! (TIMESTAMP) and `DateTime<Utc>` (TIMESTAMP_LTZ). Readers accept every Arrow unit; results
//! are written in the unit of the declared precision (finer digits are truncated, as a
//! CAST to that precision would).

use std::sync::Arc;

use arrow::array::NullBufferBuilder;
use arrow::array::{
    Array, ArrayRef, Date32Array, Date64Array, PrimitiveArray, Time32MillisecondArray,
    Time32SecondArray, Time64MicrosecondArray, Time64NanosecondArray,
};
use arrow::buffer::ScalarBuffer;
use arrow::datatypes::{
    DataType as ArrowType, Date32Type, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Utc};

use super::{
    ArgReader, ArgValue, ResultValue, SqlType, ValueBuilder, unexpected_array, unexpected_type,
};
use crate::Error;
use crate::types::{DataType, RootSet, TypeRoot};

/// Days from 0001-01-01 (chrono's CE day 1) to 1970-01-01.
const UNIX_EPOCH_DAY_FROM_CE: i32 = 719_163;

fn nanos_per(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

pub(crate) fn date_from_days(days: i32) -> Result<NaiveDate, Error> {
    days.checked_add(UNIX_EPOCH_DAY_FROM_CE)
        .and_then(NaiveDate::from_num_days_from_ce_opt)
        .ok_or_else(|| Error::msg(format!("date {days} days from 1970-01-01 is out of range")))
}

pub(crate) fn days_from_date(date: NaiveDate) -> i32 {
    date.num_days_from_ce() - UNIX_EPOCH_DAY_FROM_CE
}

use chrono::Datelike;

pub(crate) fn time_from_nanos(nanos: i64) -> Result<NaiveTime, Error> {
    let secs = u32::try_from(nanos.div_euclid(1_000_000_000)).ok();
    secs.and_then(|s| {
        NaiveTime::from_num_seconds_from_midnight_opt(s, nanos.rem_euclid(1_000_000_000) as u32)
    })
    .ok_or_else(|| Error::msg(format!("time of day {nanos} ns is out of range")))
}

pub(crate) fn nanos_from_time(time: NaiveTime) -> i64 {
    time.num_seconds_from_midnight() as i64 * 1_000_000_000 + time.nanosecond() as i64
}

pub(crate) fn instant_from(value: i64, unit: TimeUnit) -> Result<DateTime<Utc>, Error> {
    let per = nanos_per(unit);
    let per_second = 1_000_000_000 / per;
    let secs = value.div_euclid(per_second);
    let nanos = (value.rem_euclid(per_second) * per) as u32;
    DateTime::from_timestamp(secs, nanos)
        .ok_or_else(|| Error::msg(format!("timestamp {value} is out of range")))
}

/// `value` in `unit` since the epoch, rounded toward negative infinity.
pub(crate) fn epoch_value(instant: DateTime<Utc>, unit: TimeUnit) -> Result<i64, Error> {
    let per_second = 1_000_000_000 / nanos_per(unit);
    instant
        .timestamp()
        .checked_mul(per_second)
        .map(|s| s + instant.timestamp_subsec_nanos() as i64 / nanos_per(unit))
        .ok_or_else(|| Error::msg(format!("{instant} does not fit a {unit:?} timestamp")))
}

/// Epoch-based values of any temporal Arrow array, as i64 in the array's own unit.
enum Epoch<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Epoch<'_> {
    #[inline]
    fn get(&self, index: usize) -> i64 {
        match self {
            Epoch::I32(v) => v[index] as i64,
            Epoch::I64(v) => v[index],
        }
    }
}

pub struct DateReader<'a>(Epoch<'a>, bool);

impl SqlType for NaiveDate {
    const ROOTS: RootSet = RootSet::of(TypeRoot::Date);

    fn data_type() -> DataType {
        DataType::date().not_null()
    }
}

impl<'a> ArgValue<'a> for NaiveDate {
    type Reader = DateReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        let any = array.as_any();
        if let Some(a) = any.downcast_ref::<Date32Array>() {
            Ok(DateReader(Epoch::I32(a.values()), false))
        } else if let Some(a) = any.downcast_ref::<Date64Array>() {
            Ok(DateReader(Epoch::I64(a.values()), true))
        } else {
            Err(unexpected_array::<NaiveDate>(array))
        }
    }
}

impl<'a> ArgReader<'a> for DateReader<'a> {
    type Value = NaiveDate;

    fn get(&self, index: usize) -> Result<NaiveDate, Error> {
        let value = self.0.get(index);
        // Date64 counts milliseconds.
        let days = if self.1 {
            value.div_euclid(86_400_000)
        } else {
            value
        };
        date_from_days(
            i32::try_from(days).map_err(|_| Error::msg(format!("date {days} is out of range")))?,
        )
    }
}

pub struct TimeReader<'a>(Epoch<'a>, TimeUnit);

impl SqlType for NaiveTime {
    const ROOTS: RootSet = RootSet::of(TypeRoot::Time);

    fn data_type() -> DataType {
        DataType::time(9).not_null()
    }
}

impl<'a> ArgValue<'a> for NaiveTime {
    type Reader = TimeReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        let any = array.as_any();
        if let Some(a) = any.downcast_ref::<Time32SecondArray>() {
            Ok(TimeReader(Epoch::I32(a.values()), TimeUnit::Second))
        } else if let Some(a) = any.downcast_ref::<Time32MillisecondArray>() {
            Ok(TimeReader(Epoch::I32(a.values()), TimeUnit::Millisecond))
        } else if let Some(a) = any.downcast_ref::<Time64MicrosecondArray>() {
            Ok(TimeReader(Epoch::I64(a.values()), TimeUnit::Microsecond))
        } else if let Some(a) = any.downcast_ref::<Time64NanosecondArray>() {
            Ok(TimeReader(Epoch::I64(a.values()), TimeUnit::Nanosecond))
        } else {
            Err(unexpected_array::<NaiveTime>(array))
        }
    }
}

impl<'a> ArgReader<'a> for TimeReader<'a> {
    type Value = NaiveTime;

    fn get(&self, index: usize) -> Result<NaiveTime, Error> {
        time_from_nanos(self.0.get(index) * nanos_per(self.1))
    }
}

/// Reads TIMESTAMP (no zone) or TIMESTAMP_LTZ (with zone) arrays of any unit.
pub struct TimestampReader<'a> {
    values: &'a [i64],
    unit: TimeUnit,
}

fn timestamp_reader<'a, T: ?Sized>(
    array: &'a dyn Array,
    with_zone: bool,
) -> Result<TimestampReader<'a>, Error> {
    let ArrowType::Timestamp(unit, zone) = array.data_type() else {
        return Err(unexpected_array::<T>(array));
    };
    if zone.is_some() != with_zone {
        return Err(unexpected_array::<T>(array));
    }
    let any = array.as_any();
    let values = match unit {
        TimeUnit::Second => any
            .downcast_ref::<PrimitiveArray<TimestampSecondType>>()
            .map(|a| a.values().as_ref()),
        TimeUnit::Millisecond => any
            .downcast_ref::<PrimitiveArray<TimestampMillisecondType>>()
            .map(|a| a.values().as_ref()),
        TimeUnit::Microsecond => any
            .downcast_ref::<PrimitiveArray<TimestampMicrosecondType>>()
            .map(|a| a.values().as_ref()),
        TimeUnit::Nanosecond => any
            .downcast_ref::<PrimitiveArray<TimestampNanosecondType>>()
            .map(|a| a.values().as_ref()),
    };
    let values = values.ok_or_else(|| unexpected_array::<T>(array))?;
    Ok(TimestampReader {
        values,
        unit: *unit,
    })
}

impl SqlType for NaiveDateTime {
    const ROOTS: RootSet = RootSet::of(TypeRoot::Timestamp);

    fn data_type() -> DataType {
        DataType::timestamp(9).not_null()
    }
}

pub struct NaiveDateTimeReader<'a>(TimestampReader<'a>);

impl<'a> ArgValue<'a> for NaiveDateTime {
    type Reader = NaiveDateTimeReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        timestamp_reader::<NaiveDateTime>(array, false).map(NaiveDateTimeReader)
    }
}

impl<'a> ArgReader<'a> for NaiveDateTimeReader<'a> {
    type Value = NaiveDateTime;

    fn get(&self, index: usize) -> Result<NaiveDateTime, Error> {
        instant_from(self.0.values[index], self.0.unit).map(|t| t.naive_utc())
    }
}

impl SqlType for DateTime<Utc> {
    const ROOTS: RootSet = RootSet::of(TypeRoot::TimestampLtz);

    fn data_type() -> DataType {
        DataType::timestamp_ltz(9).not_null()
    }
}

pub struct InstantReader<'a>(TimestampReader<'a>);

impl<'a> ArgValue<'a> for DateTime<Utc> {
    type Reader = InstantReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        timestamp_reader::<DateTime<Utc>>(array, true).map(InstantReader)
    }
}

impl<'a> ArgReader<'a> for InstantReader<'a> {
    type Value = DateTime<Utc>;

    fn get(&self, index: usize) -> Result<DateTime<Utc>, Error> {
        instant_from(self.0.values[index], self.0.unit)
    }
}

/// Collects epoch-based values, then wraps them in the Arrow type of the declared SQL type.
pub struct TemporalBuilder {
    values: Vec<i64>,
    nulls: NullBufferBuilder,
    target: ArrowType,
}

impl TemporalBuilder {
    fn new<T: ?Sized>(
        data_type: &DataType,
        root: TypeRoot,
        capacity: usize,
    ) -> Result<Self, Error> {
        if data_type.root() != root {
            return Err(unexpected_type::<T>(data_type));
        }
        Ok(TemporalBuilder {
            values: Vec::with_capacity(capacity),
            nulls: NullBufferBuilder::new(capacity),
            target: data_type.to_arrow(),
        })
    }

    fn unit(&self) -> TimeUnit {
        match &self.target {
            ArrowType::Time32(unit) | ArrowType::Time64(unit) | ArrowType::Timestamp(unit, _) => {
                *unit
            }
            _ => TimeUnit::Second,
        }
    }

    fn push(&mut self, value: i64) {
        self.values.push(value);
        self.nulls.append_non_null();
    }

    fn push_null(&mut self) {
        self.values.push(0);
        self.nulls.append_null();
    }

    fn build(&mut self) -> ArrayRef {
        let values = std::mem::take(&mut self.values);
        let nulls = self.nulls.finish();
        let narrow = || ScalarBuffer::from(values.iter().map(|v| *v as i32).collect::<Vec<_>>());
        match self.target.clone() {
            ArrowType::Date32 => Arc::new(PrimitiveArray::<Date32Type>::new(narrow(), nulls)),
            ArrowType::Time32(TimeUnit::Second) => {
                Arc::new(PrimitiveArray::<Time32SecondType>::new(narrow(), nulls))
            }
            ArrowType::Time32(_) => Arc::new(PrimitiveArray::<Time32MillisecondType>::new(
                narrow(),
                nulls,
            )),
            ArrowType::Time64(TimeUnit::Microsecond) => Arc::new(PrimitiveArray::<
                Time64MicrosecondType,
            >::new(
                values.into(), nulls
            )),
            ArrowType::Time64(_) => Arc::new(PrimitiveArray::<Time64NanosecondType>::new(
                values.into(),
                nulls,
            )),
            ArrowType::Timestamp(unit, zone) => match unit {
                TimeUnit::Second => Arc::new(
                    PrimitiveArray::<TimestampSecondType>::new(values.into(), nulls)
                        .with_timezone_opt(zone),
                ),
                TimeUnit::Millisecond => Arc::new(
                    PrimitiveArray::<TimestampMillisecondType>::new(values.into(), nulls)
                        .with_timezone_opt(zone),
                ),
                TimeUnit::Microsecond => Arc::new(
                    PrimitiveArray::<TimestampMicrosecondType>::new(values.into(), nulls)
                        .with_timezone_opt(zone),
                ),
                TimeUnit::Nanosecond => Arc::new(
                    PrimitiveArray::<TimestampNanosecondType>::new(values.into(), nulls)
                        .with_timezone_opt(zone),
                ),
            },
            other => unreachable!("TemporalBuilder::new accepts only temporal types, got {other}"),
        }
    }
}

macro_rules! temporal_result {
    ($rust:ty, $root:ident, |$b:ident, $v:ident| $convert:expr) => {
        impl ResultValue for $rust {
            type Builder = TemporalBuilder;

            fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
                TemporalBuilder::new::<$rust>(data_type, TypeRoot::$root, capacity)
            }
        }

        impl ValueBuilder<$rust> for TemporalBuilder {
            fn append(&mut self, $v: $rust) -> Result<(), Error> {
                let $b = &*self;
                let value: i64 = $convert;
                self.push(value);
                Ok(())
            }

            fn append_null(&mut self) {
                self.push_null()
            }

            fn finish(&mut self) -> Result<ArrayRef, Error> {
                Ok(self.build())
            }
        }
    };
}

temporal_result!(NaiveDate, Date, |_b, v| days_from_date(v) as i64);
temporal_result!(NaiveTime, Time, |b, v| nanos_from_time(v)
    / nanos_per(b.unit()));
temporal_result!(NaiveDateTime, Timestamp, |b, v| epoch_value(
    v.and_utc(),
    b.unit()
)?);
temporal_result!(DateTime<Utc>, TimestampLtz, |b, v| epoch_value(
    v,
    b.unit()
)?);
