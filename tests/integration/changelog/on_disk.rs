//! The updating GROUP BY on the disk backend with more groups than its memory budget holds:
//! groups move out to the store and back in, and the changelog is the one the in-memory
//! backend gives.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use udf_core::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use udf_runtime::datafusion::datasource::MemTable;
use udf_runtime::{Session, changelog};

use super::{rows_as_text, schema};
use crate::support;

/// Every built-in the updating GROUP BY has, DISTINCT among them.
const QUERY: &str = "SELECT k, COUNT(*) AS n, SUM(v) AS s, AVG(v) AS m, MIN(v) AS lo, \
     MAX(v) AS hi, COUNT(DISTINCT v) AS d FROM t GROUP BY k";

/// `changes` random changes of `t` over `keys` keys, each valid for a table: inserts,
/// updates (`-U` of a row there, `+U` of its new value) and deletes of rows there, so groups
/// empty and come back. Cut into batches of `per_batch` rows.
fn many_changes(keys: u64, changes: usize, per_batch: usize) -> Vec<RecordBatch> {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut live: Vec<Vec<i64>> = vec![Vec::new(); keys as usize];
    let mut rows: Vec<(&str, u64, i64)> = Vec::new();
    for _ in 0..changes {
        let key = next() % keys;
        let values = &mut live[key as usize];
        let choice = next() % 10;
        if values.is_empty() || choice < 6 {
            let value = (next() % 40) as i64;
            values.push(value);
            rows.push(("+I", key, value));
        } else if choice < 8 {
            let at = (next() % values.len() as u64) as usize;
            let new = (next() % 40) as i64;
            rows.push(("-U", key, values[at]));
            rows.push(("+U", key, new));
            values[at] = new;
        } else {
            let at = (next() % values.len() as u64) as usize;
            rows.push(("-D", key, values.swap_remove(at)));
        }
    }
    let columns: Vec<ArrayRef> = vec![
        std::sync::Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| format!("k{}", r.1)),
        )),
        std::sync::Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.2))),
        std::sync::Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
    ];
    let whole = RecordBatch::try_new(
        std::sync::Arc::new(changelog::with_row_kind(&schema())),
        columns,
    )
    .unwrap();
    (0..whole.num_rows())
        .step_by(per_batch)
        .map(|start| whole.slice(start, per_batch.min(whole.num_rows() - start)))
        .collect()
}

/// A session of `partitions` partitions with `t` the changelog `batches`, its state on the
/// disk backend under `root` with `budget` when given, else in memory.
fn session_over(
    batches: &[RecordBatch],
    partitions: usize,
    disk: Option<(&Path, &str)>,
) -> Session {
    let session = support::session_of(partitions);
    session.set_option("state.backend.type", "hashmap").unwrap();
    if let Some((root, budget)) = disk {
        support::use_disk(&session, root, budget);
    }
    let table = MemTable::try_new(batches[0].schema(), vec![batches.to_vec()]).unwrap();
    session
        .register_table("t", std::sync::Arc::new(table))
        .unwrap();
    session
}

/// Each group's changes in order (the groups' changelogs interleave freely over partitions).
fn by_group(rows: Vec<String>) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows {
        let key = row.split(' ').next().unwrap().to_owned();
        groups.entry(key).or_default().push(row);
    }
    groups
}

async fn changelog_of(session: &Session) -> Vec<String> {
    let batches = session.sql(QUERY).await.unwrap().collect().await.unwrap();
    rows_as_text(&batches)
}

fn scratch(name: &str) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("udf-group-by-disk-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    root
}

#[tokio::test]
async fn groups_beyond_the_budget_move_to_disk_and_back_with_the_same_changelog() {
    // 2,000 groups, of which a partition holds several hundred at these budgets (what the
    // store's cache and memtables leave, over the partitions).
    let batches = many_changes(2_000, 16_000, 250);
    for (partitions, budget) in [(1, "256 kb"), (2, "448 kb")] {
        let root = scratch(&format!("moves-{partitions}"));
        let in_memory = changelog_of(&session_over(&batches, partitions, None)).await;
        let on_disk_session = session_over(&batches, partitions, Some((&root, budget)));
        let on_disk = changelog_of(&on_disk_session).await;
        assert!(
            in_memory.iter().filter(|r| r.ends_with("-D")).count() > 100,
            "groups empty and come back"
        );
        if partitions == 1 {
            assert_eq!(on_disk, in_memory, "one partition: the same rows in order");
        } else {
            assert_eq!(
                by_group(on_disk),
                by_group(in_memory),
                "each group's changes"
            );
        }

        let moved = support::groups_moved(&on_disk_session, QUERY).await;
        let what = format!("{partitions} partitions");
        support::assert_groups_moved(moved, 2_000.0, &root, &what);
    }
}

/// With a budget that holds them all, no group moves.
#[tokio::test]
async fn groups_within_the_budget_stay_in_memory() {
    let batches = many_changes(300, 3_000, 500);
    let root = scratch("within");
    let session = session_over(&batches, 1, Some((&root, "16 mb")));
    let (out, _, text) = support::groups_moved(&session, QUERY).await;
    assert_eq!(out, 0.0, "{text}");
    let in_memory = changelog_of(&session_over(&batches, 1, None)).await;
    assert_eq!(changelog_of(&session).await, in_memory);
    let _ = std::fs::remove_dir_all(&root);
}

/// Keys of several columns, integer keys and NULL keys go to disk and come back as they left.
#[tokio::test]
async fn keys_of_several_columns_and_null_keys_move_to_disk_and_back() {
    let sql = "SELECT CASE WHEN v < 5 THEN NULL ELSE k END AS key, v % 3 AS b, COUNT(*) AS n, \
               SUM(v) AS s FROM t GROUP BY CASE WHEN v < 5 THEN NULL ELSE k END, v % 3";
    let batches = many_changes(1_000, 8_000, 200);
    let root = scratch("keys");
    let run = |session: Session| async move {
        let batches = session.sql(sql).await.unwrap().collect().await.unwrap();
        rows_as_text(&batches)
    };
    let in_memory = run(session_over(&batches, 1, None)).await;
    assert!(
        in_memory.iter().any(|r| r.starts_with("NULL ")),
        "NULL keys"
    );
    let on_disk = run(session_over(&batches, 1, Some((&root, "192 kb")))).await;
    assert_eq!(on_disk, in_memory);
    let _ = std::fs::remove_dir_all(&root);
}
