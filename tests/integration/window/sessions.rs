//! Session windows over many keys that come and go: keys without an open session are
//! forgotten as the stream goes on (their number would grow without bound otherwise), and
//! the keys of open sessions keep their sessions through it.

use std::sync::Arc;
use std::time::Duration;

use udf_core::arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use udf_runtime::datafusion::datasource::MemTable;

use super::on_disk::sorted;
use super::streaming::schema;
use crate::support;

/// Row `i` at `10 i` ms with value `i`: even rows open key `k{i/2}`, odd rows from 101 on
/// join key `k{(i - 101)/2}` 1,010 ms after its first row, within the 1.5 s gap. About 230
/// keys have an open session at a time while 15,000 come and go.
const ROWS: i64 = 30_000;
const SECOND_ROW_AFTER: i64 = 101;

fn key_of(row: i64) -> Option<i64> {
    match row % 2 {
        0 => Some(row / 2),
        _ if row >= SECOND_ROW_AFTER => Some((row - SECOND_ROW_AFTER) / 2),
        _ => None,
    }
}

fn events() -> Vec<RecordBatch> {
    let rows: Vec<(i64, i64)> = (0..ROWS)
        .filter_map(|row| key_of(row).map(|key| (row, key)))
        .collect();
    let whole = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(_, key)| format!("k{key}")),
            )),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|(row, _)| *row),
            )),
            Arc::new(TimestampMillisecondArray::from_iter_values(
                rows.iter().map(|(row, _)| row * 10),
            )),
        ],
    )
    .unwrap();
    (0..whole.num_rows())
        .step_by(500)
        .map(|start| whole.slice(start, 500.min(whole.num_rows() - start)))
        .collect()
}

/// Each key's session as `key rows sum start end` (ms), worked out from the rows.
fn expected() -> Vec<String> {
    let mut sessions = std::collections::BTreeMap::<i64, (i64, i64, i64, i64)>::new();
    for row in 0..ROWS {
        if let Some(key) = key_of(row) {
            let time = row * 10;
            let session = sessions.entry(key).or_insert((0, 0, time, time));
            session.0 += 1;
            session.1 += row;
            session.3 = time;
        }
    }
    let mut rows: Vec<String> = sessions
        .iter()
        .map(|(key, (n, sum, first, last))| format!("k{key} {n} {sum} {first} {}", last + 1_500))
        .collect();
    rows.sort();
    rows
}

#[tokio::test]
async fn sessions_of_ever_new_keys_close_right_while_old_keys_are_forgotten() {
    for partitions in [1, 2] {
        let session = support::session_of(partitions);
        let table = MemTable::try_new(schema(), vec![events()]).unwrap();
        session.register_table("events", Arc::new(table)).unwrap();
        session.declare_watermark("events", "ts", Duration::from_secs(2));
        let sql = "SELECT k, n, s, CAST(window_start AS BIGINT), CAST(window_end AS BIGINT) FROM \
                   (SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s FROM \
                   TABLE(SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1.5' SECOND)) \
                   GROUP BY window_start, window_end, k)";
        let rows = sorted(&session, sql).await;
        let expected = expected();
        assert_eq!(
            rows.len(),
            expected.len(),
            "{partitions} partitions: a row per key"
        );
        // Not `assert_eq!`: thousands of rows would flood the report.
        if let Some(at) = (0..rows.len()).find(|&at| rows[at] != expected[at]) {
            panic!(
                "{partitions} partitions: row {at} is `{}`, expected `{}`",
                rows[at], expected[at]
            );
        }
    }
}
