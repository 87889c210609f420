//! The crash test: a child process runs `INSERT INTO` a CSV table from `Tally` (a count with
//! TTL, a `MapView`, named timers) over a fed table, with a checkpoint every 50 ms; the parent
//! kills it with SIGKILL at a random moment, starts it again from the latest checkpoint (the
//! child resends the feed from the checkpoint's position), and repeats. After the last run
//! finishes, the committed files hold exactly the uninterrupted output: each key's rows in
//! order, none lost, none twice, every timer fired once.
//!
//! `UDF_CRASH_CYCLES` (100) kills and `UDF_CRASH_ROWS` (20,000) input rows; e.g.
//! `UDF_CRASH_CYCLES=1000 UDF_CRASH_ROWS=200000 cargo test --test integration
//! checkpoint::crash -- --nocapture`. `UDF_CRASH_SEED` repeats a run's kill times.

use std::path::Path;
use std::sync::mpsc;
use std::time::Instant;

use udf_runtime::Checkpoint;

use super::sink::{committed_rows, comparable, create_output};
use super::*;
use crate::support::{spawn_test, wait_for_line};

const CHILD: &str = "UDF_CRASH_CHILD";
const KEYS: usize = 29;
/// Rows the child sends per batch, and its pause between batches (1 row a millisecond, so
/// a run killed within 250 ms commits at most a few hundred rows: a hundred kills cannot
/// finish the input).
const BATCH: usize = 10;
const PAUSE: Duration = Duration::from_millis(10);

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A small generator of kill delays (xorshift), seeded so a failing run can be repeated.
struct Delays(u64);

impl Delays {
    /// 20 to 250 ms.
    fn next(&mut self) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        Duration::from_millis(20 + self.0 % 231)
    }
}

/// The child: runs the insert from the latest checkpoint (or from the start), resending the
/// feed from its position; prints `started` once the query runs and `done` when it is over.
fn child(root: &Path, backend: &str, rows: usize, fast: bool) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let session = Session::with_config(
            udf_runtime::datafusion::prelude::SessionConfig::new().with_target_partitions(2),
        );
        if backend == "disk" {
            session.set_option("state.backend.type", "fjall").unwrap();
            let state = root.join("state");
            session
                .set_option("state.backend.fjall.localdir", state.to_str().unwrap())
                .unwrap();
            session
                .set_option("state.backend.fjall.memory-budget", "4 kb")
                .unwrap();
        }
        session.register(Tally).unwrap();
        let feed = session.register_feed("events", schema()).unwrap();
        session.declare_watermark("events", "ts", Duration::ZERO);
        let checkpoints = root.join("checkpoints");
        session
            .set_option("execution.checkpointing.interval", "50 ms")
            .unwrap();
        session
            .set_option("execution.checkpointing.dir", checkpoints.to_str().unwrap())
            .unwrap();
        session
            .set_option("execution.checkpointing.num-retained", "2")
            .unwrap();
        // A run killed before its first checkpoint completed left nothing to resume.
        let position = match Checkpoint::find(&checkpoints, "crash") {
            Ok(checkpoint) => {
                session
                    .set_option(
                        "execution.state-recovery.path",
                        checkpoint.dir().to_str().unwrap(),
                    )
                    .unwrap();
                checkpoint.position("events").unwrap() as usize
            }
            Err(_) => 0,
        };
        create_output(&session, &root.join("out"), "csv").await;
        let insert = session
            .sql(&format!("INSERT INTO out {}", query("crash")))
            .await
            .unwrap();
        let result = tokio::spawn(insert.collect());
        println!("started at {position}");
        let input = input(rows, KEYS);
        let mut at = position;
        while at < rows {
            let end = (at + BATCH).min(rows);
            if feed.send(input.slice(at, end - at)).await.is_err() {
                // The query stopped reading: its own error says why.
                let outcome = result.await.unwrap();
                panic!("the query ended while rows were sent: {outcome:?}");
            }
            at = end;
            if !fast {
                tokio::time::sleep(PAUSE).await;
            }
        }
        feed.close();
        let written = result.await.unwrap().unwrap();
        println!("done {}", written[0].num_rows());
    });
}

/// Starts the child; gives it and its stdout lines.
fn start(
    root: &Path,
    backend: &str,
    rows: usize,
    fast: bool,
    test: &str,
) -> (std::process::Child, mpsc::Receiver<String>) {
    spawn_test(
        test,
        &[
            (CHILD, root.to_str().unwrap().to_owned()),
            ("UDF_CRASH_BACKEND", backend.to_owned()),
            ("UDF_CRASH_ROWS", rows.to_string()),
            ("UDF_CRASH_FAST", if fast { "1" } else { "0" }.to_owned()),
        ],
    )
}

fn crash_test(backend: &str, test: &str) {
    if let Some(root) = std::env::var_os(CHILD) {
        let rows = setting("UDF_CRASH_ROWS", 20_000) as usize;
        let fast = std::env::var("UDF_CRASH_FAST").is_ok_and(|v| v == "1");
        return child(Path::new(&root), backend, rows, fast);
    }
    let cycles = setting("UDF_CRASH_CYCLES", 100);
    let rows = setting("UDF_CRASH_ROWS", 20_000) as usize;
    let seed = setting(
        "UDF_CRASH_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1,
    );
    println!("crash test on {backend}: seed {seed}");
    let root = scratch(&format!("crash-{backend}"));
    std::fs::create_dir_all(&root).unwrap();
    let mut delays = Delays(seed);
    let started = Instant::now();
    let mut kills = 0;
    let mut positions = Vec::new();
    loop {
        let fast = kills >= cycles;
        let (mut child, lines) = start(&root, backend, rows, fast, test);
        let line = wait_for_line(&lines, "started", Duration::from_secs(60));
        positions.push(
            line.as_deref()
                .and_then(|l| l.strip_prefix("started at "))
                .map(str::to_owned),
        );
        if !fast {
            std::thread::sleep(delays.next());
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
                kills += 1;
                continue;
            }
        }
        // Not killed: it must finish, and say so.
        let done = wait_for_line(&lines, "done", Duration::from_secs(300));
        let status = child.wait().unwrap();
        assert!(
            status.success() && done.is_some(),
            "the last run failed: {status}"
        );
        break;
    }
    let elapsed = started.elapsed();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (expected, committed) = runtime.block_on(async {
        let expected = uninterrupted(&input(rows, KEYS), 2).await;
        let committed = by_key(&committed_rows(&root.join("out"), "csv").await);
        (comparable(expected), comparable(committed))
    });
    let count = |rows: &BTreeMap<String, Vec<String>>, pick: &dyn Fn(&String) -> bool| {
        rows.values().flatten().filter(|r| pick(r)).count()
    };
    let idle = |r: &String| r.contains("idle");
    let (expected_rows, committed_rows) =
        (count(&expected, &|_| true), count(&committed, &|_| true));
    let mut multiset: BTreeMap<&String, i64> = BTreeMap::new();
    for row in expected.values().flatten() {
        *multiset.entry(row).or_default() += 1;
    }
    for row in committed.values().flatten() {
        *multiset.entry(row).or_default() -= 1;
    }
    let lost: i64 = multiset.values().filter(|&&n| n > 0).sum();
    let duplicated: i64 = -multiset.values().filter(|&&n| n < 0).sum::<i64>();
    println!(
        "figures backend={backend} kills={kills} runs={} rows_in={rows} rows_out={expected_rows} committed={committed_rows} lost={lost} duplicated={duplicated} timers_expected={} timers_committed={} seconds={:.1}",
        positions.len(),
        count(&expected, &idle),
        count(&committed, &idle),
        elapsed.as_secs_f64()
    );
    assert!(
        kills >= cycles,
        "only {kills} kills before the input was done"
    );
    let resumed = positions
        .iter()
        .filter(|p| p.as_deref().is_some_and(|p| p != "0"))
        .count();
    assert!(
        resumed > positions.len() / 2,
        "runs resumed from a checkpoint: {resumed} of {}",
        positions.len()
    );
    assert_eq!(in_progress_files(&root.join("out")), Vec::<String>::new());
    assert_eq!((lost, duplicated), (0, 0));
    assert_eq!(committed, expected, "each key's rows in order");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn killed_at_random_and_restarted_commits_every_row_once_in_memory() {
    crash_test(
        "memory",
        "checkpoint::crash::killed_at_random_and_restarted_commits_every_row_once_in_memory",
    );
}

#[test]
fn killed_at_random_and_restarted_commits_every_row_once_on_disk() {
    crash_test(
        "disk",
        "checkpoint::crash::killed_at_random_and_restarted_commits_every_row_once_on_disk",
    );
}
