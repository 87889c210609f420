//! `changelog::materialize`: the table a changelog leaves.

use udf_core::arrow::array::RecordBatch;
use udf_runtime::changelog;

use super::{Change, changelog_table, output_batches, session};
use crate::support;

fn rows(batch: &RecordBatch) -> Vec<String> {
    support::batches_to_rows(std::slice::from_ref(batch))
        .iter()
        .map(|row| {
            row.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The streaming GROUP BY's changelog, applied, is the bounded GROUP BY's result over the
/// same rows (insert-only input, so both are defined).
#[tokio::test]
async fn a_materialized_changelog_equals_the_bounded_result() {
    let keys = ["a", "b", "c", "d", "e", "f", "g"];
    let changes: Vec<Change> = (0..300)
        .map(|i: i64| {
            (
                "+I",
                keys[(i * 5 % 7) as usize],
                (i % 11 != 0).then_some(i % 13 - 4),
            )
        })
        .collect();
    let sql = "SELECT k, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS lo, MAX(v) AS hi FROM t GROUP BY k";

    let streaming = session(2);
    let feed = streaming.register_feed("t", super::schema()).unwrap();
    let log = output_batches(&streaming, feed, sql, &changes, false, 16).await;
    let mut materialized = rows(&changelog::materialize(&log).unwrap());
    materialized.sort();

    let bounded = session(2);
    bounded
        .register_batch("t", super::batch_of(&changes, false))
        .unwrap();
    let mut expected: Vec<String> = support::rows(&bounded, sql)
        .await
        .iter()
        .map(|row| {
            row.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    expected.sort();
    assert_eq!(materialized, expected);
    assert_eq!(materialized.len(), keys.len());
}

#[tokio::test]
async fn materializing_applies_updates_and_deletes() {
    let changes: [Change; 6] = [
        ("+I", "a", Some(1)),
        ("+I", "b", Some(2)),
        ("-U", "a", Some(1)),
        ("+U", "a", Some(3)),
        ("-D", "b", Some(2)),
        ("+I", "c", None),
    ];
    let session = session(1);
    let feed = changelog_table(&session);
    let log = output_batches(&session, feed, "SELECT k, v FROM t", &changes, true, 2).await;
    let table = changelog::materialize(&log).unwrap();
    assert_eq!(rows(&table), ["a 3", "c NULL"]);
    let unmatched = [super::batch_of(&[("-D", "z", Some(9))], true)];
    let error = changelog::materialize(&unmatched).unwrap_err().to_string();
    assert!(
        error.contains("row 0 of changelog batch 0 takes back a row the changelog never added"),
        "{error}"
    );
}
