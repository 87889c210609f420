//! Checkpoints and savepoints (docs/architecture.md, "Checkpoints"): a query stopped at a
//! savepoint and restored gives, with what it gave before, exactly the uninterrupted output;
//! periodic checkpoints complete and are kept as configured; a damaged checkpoint is passed
//! over or named; plans that cannot be checkpointed are refused when planned.

mod crash;
mod errors;
mod files;
mod group_by;
mod over;
mod restore;
mod sink;
mod table_aggregate;
mod window;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use udf_core::Value;
use udf_core::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use udf_core::arrow::datatypes::{Field, Schema, SchemaRef};
use udf_core::prelude::*;
use udf_core::types::DataType;
use udf_runtime::Session;
use udf_runtime::datafusion::execution::SendableRecordBatchStream;

use crate::support::batches_to_rows;

/// A name of the running test's own: `name` and its backend (`on_both_backends!` runs both
/// at once).
pub fn own(name: &str) -> String {
    format!("{name}-{:?}", crate::support::test_backend()).to_lowercase()
}

/// A directory of the test's own, empty.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "udf-ckpt-test-{}-{}",
        std::process::id(),
        own(name)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    rows: i64,
}

#[derive(SqlRow)]
pub struct Event {
    k: String,
    word: String,
}

#[derive(SqlRow)]
pub struct Tallied {
    rows: i64,
    /// How often the row's word was seen for the key.
    same_word: i64,
    what: String,
}

/// Per key: a count with a TTL, the words seen in a `MapView`, and a named timer ten seconds
/// after each row that reports the key idle and forgets it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally;

#[ptf(name = "Tally")]
impl Tally {
    fn eval(
        &self,
        ctx: &mut Context,
        #[state(ttl = "1 h")] seen: &mut Seen,
        #[state] words: &mut MapView<String, i64>,
        #[argument(set_semantic_table, require_on_time)] input: Event,
        out: &mut Collector<Tallied>,
    ) {
        seen.rows += 1;
        let same_word = words.get(input.word.as_str()).copied().unwrap_or(0) + 1;
        words.put(input.word.clone(), same_word);
        let mut time = ctx.time_context();
        let now = time.time_millis().expect("on_time");
        time.register_on_time_millis("idle", now + 10_000);
        out.collect(Tallied {
            rows: seen.rows,
            same_word,
            what: input.word,
        });
    }

    fn on_timer(
        &self,
        ctx: &mut OnTimerContext,
        #[state] seen: &mut Seen,
        #[state] words: &mut MapView<String, i64>,
        out: &mut Collector<Tallied>,
    ) {
        out.collect(Tallied {
            rows: seen.rows,
            same_word: 0,
            what: format!("idle {}", ctx.current_timer().unwrap_or("?")),
        });
        let _ = words;
        ctx.clear_all();
    }
}

/// `(k STRING, word STRING, ts TIMESTAMP_LTZ(3))`.
pub fn schema() -> SchemaRef {
    let ts: DataType = "TIMESTAMP_LTZ(3)".parse().unwrap();
    Arc::new(Schema::new(vec![
        Field::new("k", udf_core::arrow::datatypes::DataType::Utf8, false),
        Field::new("word", udf_core::arrow::datatypes::DataType::Utf8, false),
        ts.to_arrow_field("ts").with_nullable(false),
    ]))
}

/// `rows` rows: key `(7 i) % keys`, a word of five, a time 100 ms apart — with a gap of 20 s
/// every 400 rows, so every key goes idle there (`keys` under 100).
pub fn input(rows: usize, keys: usize) -> RecordBatch {
    let schema = schema();
    let k: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..rows).map(|i| format!("k{}", (i * 7) % keys)),
    ));
    let word: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..rows).map(|i| ["ant", "bee", "cat", "dog", "eel"][(i / 3) % 5]),
    ));
    let millis =
        Int64Array::from_iter_values((0..rows).map(|i| i as i64 * 100 + (i / 400) as i64 * 20_000));
    let ts = udf_core::arrow::compute::cast(&millis, schema.field(2).data_type()).unwrap();
    RecordBatch::try_new(schema, vec![k, word, ts]).unwrap()
}

/// `Tally` over `events` with uid `uid` (tests running at once use their own: on disk a
/// uid names the state's directory).
pub fn query(uid: &str) -> String {
    format!(
        "SELECT * FROM Tally(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts), uid => '{uid}')"
    )
}

/// A session of `partitions` processors with `Tally` and a fed `events` table.
pub fn fed_session(partitions: usize) -> (Session, udf_runtime::Feed) {
    delayed_session(partitions, Duration::ZERO)
}

/// `fed_session` with the watermark `delay` behind the largest time seen.
pub fn delayed_session(partitions: usize, delay: Duration) -> (Session, udf_runtime::Feed) {
    let session = crate::support::session_of(partitions);
    session.register(Tally).unwrap();
    let feed = session.register_feed("events", schema()).unwrap();
    session.declare_watermark("events", "ts", delay);
    (session, feed)
}

/// The uid EXPLAIN shows for operator `exec` of `sql` when checkpoints are on (a GROUP BY's
/// or a window aggregate's, which SQL gives no place to name).
pub async fn uid_of(session: &Session, sql: &str, exec: &str) -> String {
    let plan = session
        .sql(&format!("EXPLAIN {sql}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let text = format!(
        "{}",
        udf_core::arrow::util::pretty::pretty_format_batches(&plan).unwrap()
    );
    let at = text
        .find(exec)
        .and_then(|at| text[at..].find("uid=").map(|uid| at + uid + 4))
        .unwrap_or_else(|| panic!("no uid in the plan:\n{text}"));
    text[at..]
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .next()
        .unwrap()
        .to_owned()
}

/// Turns checkpoints on for `session`: one every `interval`, into `dir`.
pub fn checkpoint_every(session: &Session, interval: &str, dir: &std::path::Path) {
    session
        .set_option("execution.checkpointing.interval", interval)
        .unwrap();
    session
        .set_option("execution.checkpointing.dir", dir.to_str().unwrap())
        .unwrap();
}

/// The error planning `sql` gives (the test fails if it plans).
pub async fn planning_error(session: &Session, sql: &str) -> String {
    match session.sql(sql).await {
        Ok(df) => match df.create_physical_plan().await {
            Ok(_) => panic!("planned: {sql}"),
            Err(error) => error.to_string(),
        },
        Err(error) => error.to_string(),
    }
}

/// The in-progress files left in `dir` (none once every run ended).
pub fn in_progress_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".inprogress"))
        .collect()
}

/// `sql` running, its output drained by a task.
pub async fn running(session: &Session, sql: &str) -> tokio::task::JoinHandle<Vec<RecordBatch>> {
    let output = session
        .sql(sql)
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    tokio::spawn(drain(output))
}

/// The output of `sql` over all of `input` sent through `feed` (in batches of `batch`), to
/// the end of input.
pub async fn output_of(
    session: &Session,
    feed: udf_runtime::Feed,
    sql: &str,
    input: &RecordBatch,
    batch: usize,
) -> Vec<RecordBatch> {
    let drained = running(session, sql).await;
    send(&feed, input, 0..input.num_rows(), batch).await;
    feed.close();
    drained.await.unwrap()
}

/// Sends `rows` of `input` in batches of `batch` rows.
pub async fn send(
    feed: &udf_runtime::Feed,
    input: &RecordBatch,
    rows: std::ops::Range<usize>,
    batch: usize,
) {
    let mut at = rows.start;
    while at < rows.end {
        let length = batch.min(rows.end - at);
        feed.send(input.slice(at, length)).await.unwrap();
        at += length;
    }
}

/// Every batch of `output`, failing the test after 30 s instead of hanging.
pub async fn drain(mut output: SendableRecordBatchStream) -> Vec<RecordBatch> {
    let mut batches = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(30), output.next()).await {
            Ok(Some(batch)) => batches.push(batch.unwrap()),
            Ok(None) => return batches,
            Err(_) => panic!("the output did not end within 30 s"),
        }
    }
}

/// Output rows by key (the first column), each key's in order: processors interleave keys
/// freely, but a key's rows come in one order.
pub fn by_key(batches: &[RecordBatch]) -> BTreeMap<String, Vec<Vec<Value>>> {
    let mut keys: BTreeMap<String, Vec<Vec<Value>>> = BTreeMap::new();
    for row in batches_to_rows(batches) {
        let key = match &row[0] {
            Value::String(k) => k.clone(),
            other => panic!("a key is a string, not {other:?}"),
        };
        keys.entry(key).or_default().push(row);
    }
    keys
}

/// The whole input through `Tally` without interruption.
pub async fn uninterrupted(
    input: &RecordBatch,
    partitions: usize,
) -> BTreeMap<String, Vec<Vec<Value>>> {
    uninterrupted_query(input, partitions, &query("{uid}"), Duration::ZERO).await
}

/// The whole input through `sql` (its uid written `{uid}`) without interruption, the
/// watermark `delay` behind.
pub async fn uninterrupted_query(
    input: &RecordBatch,
    partitions: usize,
    sql: &str,
    delay: Duration,
) -> BTreeMap<String, Vec<Vec<Value>>> {
    let (session, feed) = delayed_session(partitions, delay);
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let uid = format!(
        "uninterrupted-{}",
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    by_key(&output_of(&session, feed, &sql.replace("{uid}", &uid), input, 64).await)
}
