//! `table.local-time-zone` applied to event time: windows over a TIMESTAMP_LTZ time column are
//! cut on the local wall clock (a day window starts at local midnight, as in Flink), so row
//! times and watermarks are moved into local time before windows are assigned and fired.
//! The offset is the one in force at each instant; within the hour a daylight-saving change
//! repeats or skips, windows follow the wall clock as it reads.

use chrono::{DateTime, Offset, TimeZone};
use datafusion::arrow::array::timezone::Tz;

/// The session's zone, for a time column of TIMESTAMP_LTZ.
#[derive(Clone, Debug)]
pub struct LocalTime(pub Tz);

impl LocalTime {
    /// The wall-clock reading of UTC instant `millis`, as epoch milliseconds of that reading.
    pub fn local(&self, millis: i64) -> i64 {
        millis.saturating_add(self.offset(millis))
    }

    /// The UTC instant whose wall-clock reading is `local` (by the offset at `local` read
    /// as an instant, exact away from daylight-saving changes).
    pub fn utc(&self, local: i64) -> i64 {
        local.saturating_sub(self.offset(local))
    }

    fn offset(&self, millis: i64) -> i64 {
        match DateTime::from_timestamp_millis(millis) {
            Some(at) => {
                let offset = self.0.offset_from_utc_datetime(&at.naive_utc());
                i64::from(offset.fix().local_minus_utc()) * 1000
            }
            // Far outside chrono's range (a watermark of +∞): no shift.
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LocalTime;

    #[test]
    fn instants_read_on_the_local_wall_clock() {
        let shanghai = LocalTime("Asia/Shanghai".parse().unwrap());
        // 2021-04-15 15:00 UTC is 23:00 in Shanghai.
        let utc = 1_618_498_800_000;
        assert_eq!(shanghai.local(utc), utc + 8 * 3_600_000);
        assert_eq!(shanghai.utc(shanghai.local(utc)), utc);
        assert_eq!(shanghai.local(i64::MAX), i64::MAX);
        let fixed = LocalTime("-05:00".parse().unwrap());
        assert_eq!(fixed.local(0), -5 * 3_600_000);
    }
}
