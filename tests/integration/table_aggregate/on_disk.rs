//! A table aggregate's changelog on the disk backend with more groups than its memory budget
//! holds: groups move out to the store and back in — each with its accumulator and, for
//! `emit_value`, whether its rows are out to be retracted — and the changelog is the one the
//! in-memory backend gives, over a bounded table and over a stream.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use udf_core::arrow::array::{Int32Array, RecordBatch, StringArray};
use udf_core::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use udf_examples::table_aggregate::{top2::Top2, top2_with_retract::Top2WithRetract};
use udf_runtime::Session;
use udf_runtime::datafusion::datasource::MemTable;

use crate::support::{self, batches_to_rows, left_in};

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("k", DataType::Utf8, false),
        Field::new("v", DataType::Int32, false),
    ]))
}

/// `rows` rows over `keys` random keys with random values, in batches of `per_batch`.
fn events(rows: usize, keys: u64, per_batch: usize) -> Vec<RecordBatch> {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut k, mut v) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
    for _ in 0..rows {
        k.push(format!("k{}", next() % keys));
        v.push((next() % 1000) as i32);
    }
    let whole = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(StringArray::from(k)),
            Arc::new(Int32Array::from(v)),
        ],
    )
    .unwrap();
    (0..rows)
        .step_by(per_batch)
        .map(|start| whole.slice(start, per_batch.min(rows - start)))
        .collect()
}

/// Both functions: `Top2` retracts a group's rows through the runtime (`emit_value`), which
/// must know after a move whether they are out; `Top2WithRetract` through its accumulator.
fn query(function: &str, table: &str) -> String {
    format!("SELECT * FROM {function}(input => TABLE {table} PARTITION BY k, changelog => TRUE)")
}

/// A session of `partitions` partitions with both functions, its state on the disk backend
/// under `root` with `budget` when given, else in memory.
fn session_of(partitions: usize, disk: Option<(&Path, &str)>) -> Session {
    let session = support::session_of(partitions);
    session.set_option("state.backend.type", "hashmap").unwrap();
    if let Some((root, budget)) = disk {
        support::use_disk(&session, root, budget);
    }
    session.register(Top2).unwrap();
    session.register(Top2WithRetract).unwrap();
    session
}

fn over_table(batches: &[RecordBatch], partitions: usize, disk: Option<(&Path, &str)>) -> Session {
    let session = session_of(partitions, disk);
    let table = MemTable::try_new(schema(), vec![batches.to_vec()]).unwrap();
    session.register_table("t", Arc::new(table)).unwrap();
    session
}

/// The rows as `k value rank op`, in order.
fn as_text(batches: &[RecordBatch]) -> Vec<String> {
    batches_to_rows(batches)
        .iter()
        .map(|row| {
            let values: Vec<String> = row.iter().map(ToString::to_string).collect();
            values.join(" ")
        })
        .collect()
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

async fn changelog_of(session: &Session, sql: &str) -> Vec<String> {
    as_text(&session.sql(sql).await.unwrap().collect().await.unwrap())
}

fn scratch(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!(
        "udf-table-aggregate-disk-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    root
}

#[tokio::test]
async fn groups_beyond_the_budget_move_to_disk_and_back_with_the_same_changelog() {
    // 1,500 keys; at "200 kb" one partition holds several hundred groups (what the store's
    // cache and memtables leave), at "1 kb" each partition two (every batch moves groups out
    // and back).
    let batches = events(6_000, 1_500, 250);
    for function in ["Top2", "Top2WithRetract"] {
        let sql = query(function, "t");
        for (partitions, budget) in [(1, "200 kb"), (2, "1 kb")] {
            let root = scratch(&format!("{function}-{partitions}"));
            let in_memory = changelog_of(&over_table(&batches, partitions, None), &sql).await;
            let on_disk_session = over_table(&batches, partitions, Some((&root, budget)));
            let on_disk = changelog_of(&on_disk_session, &sql).await;
            assert!(
                in_memory
                    .iter()
                    .filter(|r| r.ends_with("-U") || r.ends_with("-D"))
                    .count()
                    > 1_000,
                "{function}: groups retract rows"
            );
            let what = format!("{function}, {partitions} partitions at {budget}");
            if partitions == 1 {
                // Not `assert_eq!`: thousands of rows would flood the report.
                assert!(on_disk == in_memory, "{what}: the same rows in order");
            } else {
                assert!(
                    by_group(on_disk) == by_group(in_memory),
                    "{what}: each group's changes"
                );
            }

            let moved = support::groups_moved(&on_disk_session, &sql).await;
            support::assert_groups_moved(moved, 1_000.0, &root, &what);
        }
    }
}

/// With a budget that holds them all, no group moves.
#[tokio::test]
async fn groups_within_the_budget_stay_in_memory() {
    let batches = events(2_000, 40, 200);
    let root = scratch("within");
    let session = over_table(&batches, 1, Some((&root, "16 mb")));
    let sql = query("Top2", "t");
    let (out, _, text) = support::groups_moved(&session, &sql).await;
    assert_eq!(out, 0.0, "{text}");
    let in_memory = changelog_of(&over_table(&batches, 1, None), &sql).await;
    assert_eq!(changelog_of(&session, &sql).await, in_memory);
    let _ = std::fs::remove_dir_all(&root);
}

/// Over a fed (unbounded) table the changelog goes on as rows come, its groups beyond the
/// budget on disk, and is the one the in-memory backend gives.
#[tokio::test]
async fn over_a_stream_groups_beyond_the_budget_go_to_disk() {
    let batches = events(3_000, 600, 100);
    let root = scratch("stream");
    let mut changelogs = Vec::new();
    for disk in [None, Some((root.as_path(), "1 kb"))] {
        let session = session_of(2, disk);
        let feed = session.register_feed("events", schema()).unwrap();
        let stream = session
            .sql(&query("Top2", "events"))
            .await
            .unwrap()
            .execute_stream()
            .await
            .unwrap();
        let received = support::through_feed(feed, &batches, stream, Duration::from_secs(30)).await;
        changelogs.push(by_group(as_text(&received)));
    }
    assert!(changelogs[0].len() > 550, "{} keys", changelogs[0].len());
    assert!(changelogs[1] == changelogs[0], "each group's changes");
    assert!(left_in(&root).is_empty(), "{:?}", left_in(&root));
    let _ = std::fs::remove_dir_all(&root);
}
