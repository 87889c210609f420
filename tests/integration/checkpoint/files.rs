//! File scans as replayable sources: a query over a directory of Parquet, CSV or NDJSON files
//! stopped at a savepoint and restored from it reads on from the file and row where it stood,
//! and gives with what it gave before exactly the uninterrupted output; a restore over files
//! that changed is a clear error.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use udf_runtime::Checkpoint;
use udf_runtime::datafusion::parquet::arrow::ArrowWriter;
use udf_runtime::datafusion::parquet::file::properties::WriterProperties;

use super::*;

const ROWS: usize = 1200;
const FILES: usize = 4;

/// Rows seen by `unhurried`, and whether it holds the scan at row [`HOLD_AT`] until the gate
/// opens (the savepoint is asked for meanwhile, so it lands there, whatever the machine's
/// speed).
static SEEN: AtomicUsize = AtomicUsize::new(0);
static ARMED: AtomicBool = AtomicBool::new(false);
static GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
const HOLD_AT: usize = 300;

/// Passes every row, a millisecond each; held at row [`HOLD_AT`] while armed (at most 30 s).
/// It waits with `block_in_place`: a worker blocked in it hands its other tasks on, or the
/// checkpoint coordinator, woken there, would wait for the whole scan.
#[scalar_function]
fn unhurried(k: &str) -> bool {
    tokio::task::block_in_place(wait_a_little);
    !k.is_empty()
}

fn wait_a_little() {
    let seen = SEEN.fetch_add(1, Ordering::SeqCst) + 1;
    if seen == HOLD_AT && ARMED.load(Ordering::SeqCst) {
        let (open, opened) = &GATE;
        let mut open = open.lock().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !*open {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            open = opened.wait_timeout(open, left).unwrap().0;
        }
    }
    std::thread::sleep(Duration::from_millis(1));
}

/// Arms the gate (closed) and counts from nothing.
fn arm() {
    SEEN.store(0, Ordering::SeqCst);
    *GATE.0.lock().unwrap() = false;
    ARMED.store(true, Ordering::SeqCst);
}

/// Opens the gate and disarms it.
fn release() {
    ARMED.store(false, Ordering::SeqCst);
    *GATE.0.lock().unwrap() = true;
    GATE.1.notify_all();
}

/// `input` as `FILES` files of `format` in `dir` (Parquet in row groups of 100 rows).
fn write_files(dir: &Path, input: &RecordBatch, format: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let per_file = input.num_rows() / FILES;
    for file in 0..FILES {
        let rows = input.slice(file * per_file, per_file);
        let out = std::fs::File::create(dir.join(format!("part-{file}.{format}"))).unwrap();
        match format {
            "parquet" => {
                let properties = WriterProperties::builder()
                    .set_max_row_group_row_count(Some(100))
                    .build();
                let mut writer =
                    ArrowWriter::try_new(out, input.schema(), Some(properties)).unwrap();
                writer.write(&rows).unwrap();
                writer.close().unwrap();
            }
            "csv" => {
                let mut writer = udf_core::arrow::csv::Writer::new(out);
                writer.write(&rows).unwrap();
            }
            _ => {
                let mut writer = udf_core::arrow::json::LineDelimitedWriter::new(out);
                writer.write(&rows).unwrap();
                writer.finish().unwrap();
            }
        }
    }
}

/// A session of one partition (its files are read in one order, so each key's rows are)
/// with `Tally`, `unhurried` and `events` over the files of `format` in `dir`, read 50 rows
/// at a time.
async fn file_session(dir: &Path, format: &str) -> Session {
    use udf_runtime::datafusion::prelude::{CsvReadOptions, JsonReadOptions, ParquetReadOptions};

    let session = crate::support::session_of(1);
    session
        .set_option("datafusion.execution.batch_size", "50")
        .unwrap();
    session.register(Tally).unwrap();
    session.register(unhurried).unwrap();
    let (path, schema) = (format!("{}/", dir.display()), schema());
    match format {
        "parquet" => session
            .register_parquet("events", &path, ParquetReadOptions::new())
            .await
            .unwrap(),
        "csv" => session
            .register_csv("events", &path, CsvReadOptions::new().schema(&schema))
            .await
            .unwrap(),
        _ => session
            .register_json(
                "events",
                &path,
                JsonReadOptions::default()
                    .schema(&schema)
                    .file_extension(".json"),
            )
            .await
            .unwrap(),
    }
    session.declare_watermark("events", "ts", Duration::ZERO);
    session
}

fn slow_query(uid: &str) -> String {
    format!(
        "SELECT * FROM Tally(input => TABLE (SELECT * FROM events WHERE unhurried(k)) PARTITION BY k, on_time => DESCRIPTOR(ts), uid => '{uid}')"
    )
}

async fn run(session: &Session, uid: &str) -> Result<Vec<RecordBatch>, String> {
    let output = session
        .sql(&slow_query(uid))
        .await
        .map_err(|e| e.to_string())?
        .execute_stream()
        .await
        .map_err(|e| e.to_string())?;
    let mut output = output;
    let mut batches = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(30), output.next()).await {
            Ok(Some(Ok(batch))) => batches.push(batch),
            Ok(Some(Err(error))) => return Err(error.to_string()),
            Ok(None) => return Ok(batches),
            Err(_) => panic!("the output did not end within 30 s"),
        }
    }
}

// Two workers: `unhurried` holds the thread it runs on while the savepoint is asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_scan_stopped_at_a_savepoint_resumes_at_its_file_and_row() {
    for format in ["parquet", "csv", "json"] {
        stopped_and_restored_over_files(format).await;
    }
}

async fn stopped_and_restored_over_files(format: &str) {
    let name = format!("files-{format}");
    let root = scratch(&name);
    let files = root.join("events");
    let input = input(ROWS, 13);
    write_files(&files, &input, format);
    let uid = own(&name);

    let expected = {
        let session = file_session(&files, format).await;
        by_key(&run(&session, &format!("{uid}-whole")).await.unwrap())
    };
    let rows: usize = expected.values().map(Vec::len).sum();
    assert!(rows > ROWS, "every row and the idle reports: {rows}");

    let session = Arc::new(file_session(&files, format).await);
    checkpoint_every(&session, "1 h", &root.join("periodic"));
    arm();
    let before = {
        let (session, uid) = (session.clone(), uid.clone());
        tokio::spawn(async move { run(&session, &uid).await })
    };
    // Held a quarter of the way in (the scan is in its second file): the savepoint is asked
    // for, then the scan goes on and its barrier follows the rows it is on.
    let waiting = std::time::Instant::now();
    while SEEN.load(Ordering::SeqCst) < HOLD_AT && waiting.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let stopping = {
        let (session, uid, dir) = (session.clone(), uid.clone(), root.join("savepoints"));
        tokio::spawn(async move { session.stop_with_savepoint(&uid, dir).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    release();
    let savepoint = match stopping.await.unwrap() {
        Ok(savepoint) => savepoint,
        Err(error) => panic!(
            "{format}: {error}; rows seen {}; the query gave {:?}",
            SEEN.load(Ordering::SeqCst),
            before
                .await
                .unwrap()
                .map(|b| b.iter().map(|b| b.num_rows()).sum::<usize>())
        ),
    };
    let before = before.await.unwrap().unwrap();
    let checkpoint = Checkpoint::find(&savepoint, &uid).unwrap();
    let label = format!("file://{}/", files.display());
    let position = checkpoint.position(&label).unwrap();
    assert!(
        position > 0 && position < ROWS as u64,
        "stopped within the input, at {position}"
    );

    let session = file_session(&files, format).await;
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    let after = run(&session, &uid).await.unwrap();
    let mut combined = by_key(&before);
    for (key, rows) in by_key(&after) {
        combined.entry(key).or_default().extend(rows);
    }
    assert_eq!(
        combined, expected,
        "{format}: stopped at row {position} of {ROWS}"
    );

    // The files before the one it was reading are gone: a restore says so.
    let first = files.join(format!("part-0.{format}"));
    std::fs::rename(&first, root.join(format!("moved.{format}"))).unwrap();
    let session = file_session(&files, format).await;
    session
        .set_option("execution.state-recovery.path", savepoint.to_str().unwrap())
        .unwrap();
    let error = run(&session, &uid).await.unwrap_err();
    assert!(
        error.contains(&format!(
            "the files of `{label}` changed since the checkpoint"
        )),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
