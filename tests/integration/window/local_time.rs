//! `table.local-time-zone`: windows over a TIMESTAMP_LTZ time column are cut on the local
//! wall clock (rule 46), as Flink documents for `Asia/Shanghai`.

use std::time::Duration;

use udf_core::Value;
use udf_runtime::Session;

use crate::support::{column, rows, session_with_partitions};

/// Two rows an hour either side of midnight in Shanghai: 2021-04-15 23:00 and 2021-04-16
/// 01:00 there (15:00 and 17:00 UTC, the same UTC day).
fn session(ltz: bool) -> Session {
    let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap().to_utc();
    let times = ["2021-04-15T15:00:00Z", "2021-04-15T17:00:00Z"];
    let (ty, values): (&str, Vec<Value>) = if ltz {
        (
            "TIMESTAMP_LTZ(3)",
            times.iter().map(|t| Value::TimestampLtz(at(t))).collect(),
        )
    } else {
        (
            "TIMESTAMP(3)",
            times
                .iter()
                .map(|t| Value::Timestamp(at(t).naive_utc()))
                .collect(),
        )
    };
    let columns = [
        column("ts", ty, values),
        column("v", "BIGINT", vec![Value::BigInt(1), Value::BigInt(2)]),
    ];
    let session = session_with_partitions("t", &columns, 1);
    session.declare_watermark("t", "ts", Duration::ZERO);
    session
}

const DAILY: &str = "SELECT window_start, window_end, SUM(v) AS total FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end";

async fn daily(session: &Session) -> Vec<String> {
    rows(session, DAILY)
        .await
        .iter()
        .map(|r| {
            r.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect()
}

#[tokio::test]
async fn daily_windows_start_at_local_midnight() {
    // UTC, the default: one day.
    assert_eq!(
        daily(&session(true)).await,
        ["2021-04-15 00:00:00 | 2021-04-16 00:00:00 | 3"]
    );
    let shanghai = session(true);
    shanghai
        .sql("SET 'table.local-time-zone' = 'Asia/Shanghai'")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        daily(&shanghai).await,
        [
            "2021-04-15 00:00:00 | 2021-04-16 00:00:00 | 1",
            "2021-04-16 00:00:00 | 2021-04-17 00:00:00 | 2",
        ]
    );
    // A TIMESTAMP (no zone) is a wall-clock reading already: the zone does not move it.
    let plain = session(false);
    plain
        .set_option("table.local-time-zone", "Asia/Shanghai")
        .unwrap();
    assert_eq!(
        daily(&plain).await,
        ["2021-04-15 00:00:00 | 2021-04-16 00:00:00 | 3"]
    );
}

/// `window_time` stays an instant: the local window's last millisecond, in UTC.
#[tokio::test]
async fn window_time_is_the_local_windows_last_instant() {
    let shanghai = session(true);
    shanghai
        .set_option("table.local-time-zone", "+08:00")
        .unwrap();
    let times: Vec<String> = rows(
        &shanghai,
        "SELECT v, window_start, window_time FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' DAY)) ORDER BY v",
    )
    .await
    .iter()
    .map(|r| format!("{} {} {}", r[0], r[1], r[2]))
    .collect();
    assert_eq!(
        times,
        [
            "1 2021-04-15 00:00:00 2021-04-15 15:59:59.999Z",
            "2 2021-04-16 00:00:00 2021-04-16 15:59:59.999Z",
        ]
    );
}

#[test]
fn a_zone_that_is_not_one_is_refused() {
    let session = Session::new();
    let error = session
        .set_option("table.local-time-zone", "Mars/Olympus")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("table.local-time-zone: `Mars/Olympus` is no time zone"),
        "{error}"
    );
}
