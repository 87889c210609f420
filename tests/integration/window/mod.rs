//! Window table functions and window aggregates, checked against the examples of Flink's
//! documentation (the `Bid` table of "Windowing TVF" and "Window Aggregation"): rules 41–44 of
//! `docs/semantics.md`.

mod errors;
mod local_time;
mod on_disk;
mod over;
mod sessions;
mod streaming;

use std::time::Duration;

use udf_runtime::Session;

use crate::support::{column, rows, session_with_partitions};
use udf_core::Value;

/// Flink's `Bid(bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING)` on 2020-04-15, with
/// `WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND`.
fn bids(partitions: usize) -> Session {
    let times = ["08:05", "08:07", "08:09", "08:11", "08:13", "08:17"];
    let prices = ["4.00", "2.00", "5.00", "3.00", "1.00", "6.00"];
    let items = ["C", "A", "D", "B", "E", "F"];
    let at = |hm: &str| {
        Value::Timestamp(
            chrono::NaiveDateTime::parse_from_str(&format!("2020-04-15 {hm}"), "%Y-%m-%d %H:%M")
                .unwrap(),
        )
    };
    let price = |p: &str| Value::Decimal(p.parse().unwrap());
    let columns = [
        column(
            "bidtime",
            "TIMESTAMP(3)",
            times.iter().map(|t| at(t)).collect(),
        ),
        column(
            "price",
            "DECIMAL(10, 2)",
            prices.iter().map(|p| price(p)).collect(),
        ),
        column(
            "item",
            "STRING",
            items.iter().map(|&i| Value::from(i)).collect(),
        ),
    ];
    let session = session_with_partitions("bid", &columns, partitions);
    session.declare_watermark("bid", "bidtime", Duration::from_secs(1));
    session
}

/// Rows as `start end values...`, times as `HH:MM`.
async fn windows(session: &Session, sql: &str) -> Vec<String> {
    rows(session, sql)
        .await
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| match v {
                    Value::Timestamp(t) => t.format("%H:%M").to_string(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[tokio::test]
async fn tumbling_windows_sum_each_ten_minutes() {
    for partitions in [1, 2] {
        let sql = "SELECT window_start, window_end, SUM(price) AS total FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end";
        assert_eq!(
            windows(&bids(partitions), sql).await,
            ["08:00 08:10 11.00", "08:10 08:20 10.00"]
        );
    }
    // DISTINCT in a window: items before `D` or not, two kinds in each window.
    let sql = "SELECT window_start, COUNT(DISTINCT item < 'D') AS kinds, COUNT(DISTINCT price > 0) AS positive FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end";
    assert_eq!(windows(&bids(1), sql).await, ["08:00 2 1", "08:10 2 1"]);
}

#[tokio::test]
async fn hopping_windows_overlap() {
    let sql = "SELECT window_start, window_end, SUM(price) AS total FROM TABLE(HOP(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) GROUP BY window_start, window_end";
    assert_eq!(
        windows(&bids(1), sql).await,
        [
            "08:00 08:10 11.00",
            "08:05 08:15 15.00",
            "08:10 08:20 10.00",
            "08:15 08:25 6.00",
        ]
    );
}

/// Flink's named arguments reach the same windows; windows without rows emit nothing.
#[tokio::test]
async fn cumulating_windows_grow_by_their_step() {
    let sql = "SELECT window_start, window_end, SUM(price) AS total FROM TABLE(CUMULATE(DATA => TABLE bid, TIMECOL => DESCRIPTOR(bidtime), STEP => INTERVAL '2' MINUTES, SIZE => INTERVAL '10' MINUTES)) GROUP BY window_start, window_end";
    assert_eq!(
        windows(&bids(1), sql).await,
        [
            "08:00 08:06 4.00",
            "08:00 08:08 6.00",
            "08:00 08:10 11.00",
            "08:10 08:12 3.00",
            "08:10 08:14 4.00",
            "08:10 08:16 4.00",
            "08:10 08:18 10.00",
            "08:10 08:20 10.00",
        ]
    );
}

/// Grouped by an expression too, over two processors; the output is insert-only (no `op`
/// column). (A project aggregate in windows: `conformance::streaming::tumble_window_udaf`.)
#[tokio::test]
async fn window_aggregates_group_by_more_keys() {
    let session = bids(2);
    let sql = "SELECT window_start, window_end, item < 'D' AS early, COUNT(*) AS n, MAX(price) AS top FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end, item < 'D'";
    let mut rows = windows(&session, sql).await;
    rows.sort();
    assert_eq!(
        rows,
        [
            "08:00 08:10 false 1 5.00",
            "08:00 08:10 true 2 4.00",
            "08:10 08:20 false 2 6.00",
            "08:10 08:20 true 1 3.00",
        ]
    );
}

/// The window table function alone: each row once per window, with the window's columns.
#[tokio::test]
async fn a_window_table_function_alone_repeats_rows_per_window() {
    let sql = "SELECT item, window_start, window_end, window_time FROM TABLE(HOP(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) WHERE item IN ('C', 'B') ORDER BY item, window_start";
    let rows: Vec<String> = rows(&bids(1), sql)
        .await
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| match v {
                    Value::Timestamp(t) => t.format("%H:%M:%S%.3f").to_string(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(
        rows,
        [
            "B 08:05:00.000 08:15:00.000 08:14:59.999",
            "B 08:10:00.000 08:20:00.000 08:19:59.999",
            "C 08:00:00.000 08:10:00.000 08:09:59.999",
            "C 08:05:00.000 08:15:00.000 08:14:59.999",
        ]
    );
}

/// Sessions of the Bid table with a gap of 3 minutes: 08:05 to 08:13 chain into one session
/// (each row within 3 minutes of the one before), 08:17 stands alone; built-ins merge as
/// sessions join.
#[tokio::test]
async fn session_windows_chain_rows_within_the_gap() {
    let sql = "SELECT window_start, window_end, COUNT(*) AS n, SUM(price) AS total, MIN(item) AS first FROM TABLE(SESSION(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '3' MINUTES)) GROUP BY window_start, window_end";
    assert_eq!(
        windows(&bids(1), sql).await,
        ["08:05 08:16 5 15.00 A", "08:17 08:20 1 6.00 F"]
    );
}
