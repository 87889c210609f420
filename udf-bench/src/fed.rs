//! Workloads over a fed table (`Session::register_feed`), the unbounded source checkpoints
//! read: the same ids as `src`, pumped in batches while the query runs, as `fed(id)` or as
//! `fed(k, id, ts)` with a watermark on `ts`. Also the restore measurement: a savepoint of
//! a million keys, and the time a query restored from it takes to produce its first row.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use udf_runtime::datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch};
use udf_runtime::datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use udf_runtime::datafusion::error::{DataFusionError, Result};
use udf_runtime::{Checkpoint, Feed, Session, WatermarkEmission};

use crate::source::{self, Drained};

const BATCH_ROWS: u64 = 8192;

/// The columns of a fed table.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    /// `fed(id)`.
    Ids,
    /// `fed(k, id, ts)`: `k = id % keys`, `ts = id` milliseconds, watermark `ts - 1 s` after
    /// every batch (as `ptf_timer`'s `keyed` view).
    KeyedTimes { keys: u64 },
}

fn schema(shape: Shape) -> SchemaRef {
    let mut fields = vec![Field::new("id", DataType::Int64, false)];
    if let Shape::KeyedTimes { .. } = shape {
        fields.insert(0, Field::new("k", DataType::Int64, false));
        fields.push(Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ));
    }
    Arc::new(Schema::new(fields))
}

fn batch(schema: &SchemaRef, shape: Shape, start: u64, end: u64) -> Result<RecordBatch> {
    let ids = Int64Array::from_iter_values(start as i64..=end as i64);
    let columns: Vec<ArrayRef> = match shape {
        Shape::Ids => vec![Arc::new(ids)],
        Shape::KeyedTimes { keys } => {
            let k = Int64Array::from_iter_values((start..=end).map(|id| (id % keys) as i64));
            let ts =
                udf_runtime::datafusion::arrow::array::TimestampMillisecondArray::from_iter_values(
                    start as i64..=end as i64,
                );
            vec![Arc::new(k), Arc::new(ids), Arc::new(ts)]
        }
    };
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

/// Registers `table` afresh (a feed is read by one query) with its watermark.
pub fn register(session: &Session, table: &str, shape: Shape) -> Result<Feed> {
    session.deregister_table(table)?;
    let feed = session.register_feed(table, schema(shape))?;
    if let Shape::KeyedTimes { .. } = shape {
        session.declare_watermark_with(
            table,
            "ts",
            Duration::from_secs(1),
            WatermarkEmission::EveryBatch,
        );
    }
    Ok(feed)
}

/// Sends ids `1..=rows` in batches; gives the feed back (dropping it ends the input).
async fn pump(feed: Feed, shape: Shape, rows: u64) -> Result<Feed> {
    let schema = schema(shape);
    let mut start = 1;
    while start <= rows {
        let end = (start + BATCH_ROWS - 1).min(rows);
        feed.send(batch(&schema, shape, start, end)?).await?;
        start = end + 1;
    }
    Ok(feed)
}

/// Runs `sql` over `table` fed with `rows` ids.
pub async fn run(
    session: &Session,
    table: &str,
    shape: Shape,
    rows: u64,
    sql: &str,
) -> Result<Drained> {
    let feed = register(session, table, shape)?;
    // The input ends when the pump is done and drops the feed.
    let pumping = tokio::spawn(async move { pump(feed, shape, rows).await.map(drop) });
    let drained = source::drain(session, sql, false).await;
    pumping
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))??;
    drained
}

/// Checkpoints of the query of `uid` so far, as figures to print.
pub fn checkpoint_figures(session: &Session, uid: &str) -> String {
    match session.checkpoint_stats(uid) {
        Some(stats) => format!(
            " checkpoints={} checkpoint_ms={} checkpoint_bytes={} alignment_ms={:.3}",
            stats.completed,
            stats.last_duration.map_or(0, |d| d.as_millis()),
            stats.last_bytes,
            stats.last_alignment.as_secs_f64() * 1000.0
        ),
        None => " checkpoints=none".to_owned(),
    }
}

/// A million keys counted (two rows each), stopped at a savepoint; then a query restored from
/// it, timed from its start to its first row. Prints one `restore` line.
pub async fn restore(partitions: usize, keys: u64) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("udf-bench-restore-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sql = format!(
        "SELECT * FROM counter(input => TABLE (SELECT id % {keys} AS k, id FROM fed) PARTITION BY k, uid => 'restore')"
    );
    let session = |path: Option<&std::path::Path>| -> Result<Session> {
        let session = Session::with_config(
            udf_runtime::datafusion::prelude::SessionConfig::new()
                .with_target_partitions(partitions),
        );
        crate::workloads::register_counter(&session)?;
        session.set_option("execution.checkpointing.interval", "1 h")?;
        session.set_option(
            "execution.checkpointing.dir",
            dir.to_str().unwrap_or_default(),
        )?;
        if let Some(path) = path {
            session.set_option(
                "execution.state-recovery.path",
                path.to_str().unwrap_or_default(),
            )?;
        }
        Ok(session)
    };
    let first = session(None)?;
    let feed = register(&first, "fed", Shape::Ids)?;
    let mut output = first.sql(&sql).await?.execute_stream().await?;
    // Read while the rows go in: the output would otherwise fill and stop the feed.
    let seen = Arc::new(AtomicU64::new(0));
    let counting = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Some(batch) = output.next().await {
                seen.fetch_add(batch?.num_rows() as u64, Ordering::Relaxed);
            }
            Ok::<(), DataFusionError>(())
        })
    };
    let feed = pump(feed, Shape::Ids, 2 * keys).await?;
    // Every row counted before the savepoint (bounded: a minute).
    let waiting = Instant::now();
    while seen.load(Ordering::Relaxed) < 2 * keys && waiting.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let saving = Instant::now();
    let savepoint = first.stop_with_savepoint("restore", &dir).await?;
    let saved = saving.elapsed();
    counting
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))??;
    drop(feed);
    let bytes = Checkpoint::find(&savepoint, "restore")?.state_bytes();

    let second = session(Some(&savepoint))?;
    let feed = register(&second, "fed", Shape::Ids)?;
    let restoring = Instant::now();
    let mut output = second.sql(&sql).await?.execute_stream().await?;
    feed.send(batch(&schema(Shape::Ids), Shape::Ids, 1, 1)?)
        .await?;
    let first_row = output
        .next()
        .await
        .ok_or_else(|| DataFusionError::Execution("the restored query gave no row".into()))??;
    let restored = restoring.elapsed();
    let count = first_row
        .column(1)
        .as_any()
        .downcast_ref::<Int64Array>()
        .map(|c| c.value(0));
    println!(
        "restore keys={keys} partitions={partitions} savepoint_ms={} savepoint_bytes={bytes} restore_ms={} first_count={}",
        saved.as_millis(),
        restored.as_millis(),
        count.unwrap_or_default()
    );
    if count != Some(3) {
        return Err(DataFusionError::Execution(format!(
            "the restored count of key 1 is {count:?}, not 3: the state did not come back"
        )));
    }
    drop(feed);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
