//! The `udf-sql` binary as scripts and users meet it. Scripts: `-f file.sql` and `-c "SQL"`
//! print what they ran (golden files) and exit with codes a script can rely on. In a real
//! pseudo-terminal: a query over the bundled orders with a user function prints its table; a
//! streaming query over the unbounded `ticks` table prints rows while its input goes on; Ctrl-C
//! stops it and the prompt comes back; the next query works; `\q` ends the shell. A long query
//! shows a progress line in the terminal, and none when its output is piped.
//!
//! A test binary of its own (it needs the `udf-sql` binary cargo builds for this package), and a
//! small one: it links only the standard library, libc and insta.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest any step may take: a hang is a failure, not a stuck test.
const STEP: Duration = Duration::from_secs(60);

/// The shell running in a pseudo-terminal, and everything it wrote so far.
struct Terminal {
    child: Child,
    input: File,
    screen: Arc<Mutex<String>>,
}

impl Terminal {
    fn start() -> Terminal {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 160,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes the two descriptors it opens; the pointers are valid.
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned here alone.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let home = std::env::temp_dir().join(format!("udf-sql-terminal-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_udf-sql"));
        command
            .env("TERM", "xterm")
            .env("HOME", &home)
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: between fork and exec the child only calls setsid and ioctl, which are
        // async-signal-safe: it leads a session of its own whose terminal is the pseudo-
        // terminal, so Ctrl-C there reaches it as SIGINT.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("udf-sql starts");
        let mut output = File::from(master.try_clone().unwrap());
        let input = File::from(master);
        let screen = Arc::new(Mutex::new(String::new()));
        let seen = screen.clone();
        let mut answers = input.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = output.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buffer[..read]).into_owned();
                // A line editor may ask where the cursor is: answer as a terminal would.
                if text.contains("\x1b[6n") {
                    let _ = answers.write_all(b"\x1b[1;1R");
                }
                seen.lock().unwrap().push_str(&text);
            }
        });
        Terminal {
            child,
            input,
            screen,
        }
    }

    fn type_text(&mut self, text: &str) {
        self.input.write_all(text.as_bytes()).unwrap();
        self.input.flush().unwrap();
    }

    /// What the shell wrote after `from` (a length of the screen read before).
    fn since(&self, from: usize) -> String {
        self.screen.lock().unwrap()[from..].to_owned()
    }

    fn len(&self) -> usize {
        self.screen.lock().unwrap().len()
    }

    /// Types `text` and waits until the shell wrote `expected` and its prompt is back; what it
    /// wrote meanwhile.
    fn answer(&mut self, text: &str, what: &str, expected: &str) -> String {
        let from = self.len();
        self.type_text(text);
        self.wait_for(from, what, |t| {
            t.contains(expected) && t.contains("udf-sql> ")
        })
    }

    /// Waits until the shell wrote, after `from`, text for which `done` holds; that text.
    fn wait_for(&self, from: usize, what: &str, done: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let text = self.since(from);
            if done(&text) {
                return text;
            }
            assert!(
                started.elapsed() < STEP,
                "no {what} within {STEP:?}; the shell wrote:\n{}",
                self.since(0)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_shell_in_a_terminal() {
    let mut terminal = Terminal::start();
    terminal.wait_for(0, "prompt", |t| t.contains("udf-sql> "));

    // A bounded query with a user function, typed over two lines (each once the prompt is
    // there: the line editor drops what is typed before it reads).
    let from = terminal.len();
    terminal.type_text("SELECT order_id, SubstringFunction(product, 0, 4) AS short\r");
    terminal.wait_for(from, "continuation prompt", |t| t.contains("-> "));
    terminal.type_text("FROM orders ORDER BY order_id LIMIT 2;\r");
    let table = terminal.wait_for(from, "table", |t| {
        t.contains("2 rows in set") && t.contains("udf-sql> ")
    });
    assert!(table.contains("| order_id | short |"), "{table}");
    assert!(
        table.contains("| espr  |") && table.contains("| capp  |"),
        "{table}"
    );

    // A streaming query: rows come while the input goes on.
    terminal.answer(
        "SET 'sql-client.execution.result-mode' = 'tableau';\r",
        "SET",
        "Session property has been set",
    );
    let from = terminal.len();
    terminal.type_text("SELECT * FROM counter(input => TABLE ticks PARTITION BY name);\r");
    let rows = terminal.wait_for(from, "streamed rows", |t| t.contains("| +I | a    |   2 |"));
    assert!(rows.contains("| op | name | cnt |"), "{rows}");
    assert!(
        !rows.contains("Received a total"),
        "the query still runs\n{rows}"
    );

    // Ctrl-C stops it; the prompt is back and the next query works.
    terminal.answer("\x03", "cancellation", "Query cancelled");
    let answer = terminal.answer("SELECT 40 + 2 AS answer;\r", "answer", "1 row in set");
    assert!(answer.contains("|     42 |"), "{answer}");

    // An error does not end the shell.
    terminal.answer("SELECT nope(1);\r", "error", "[ERROR]");

    terminal.type_text("\\q\r");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = terminal.child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < STEP, "\\q did not end the shell");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

/// A CSV file of `rows` rows (`k`, `v`) in a directory of its own, for queries that take a
/// while; the directory (removed after the test).
fn large_csv(name: &str, rows: usize) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("udf-sql-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::from("k,v\n");
    for i in 0..rows {
        text.push_str(&format!("{},{}\n", i % 1000, i));
    }
    std::fs::write(dir.join("large.csv"), text).unwrap();
    dir
}

/// Rows enough for a query over them to run well past the moment progress shows (half a
/// second): about four seconds here, unoptimized.
const LARGE_ROWS: usize = 3_000_000;

/// The statements of the long query over [`large_csv`]'s file.
fn long_query(dir: &std::path::Path) -> String {
    format!(
        "CREATE EXTERNAL TABLE IF NOT EXISTS large (k BIGINT, v BIGINT) STORED AS CSV LOCATION '{}/' \
         OPTIONS ('format.has_header' 'true'); \
         SELECT COUNT(*) AS n, MAX(cnt) AS most FROM counter(input => TABLE large PARTITION BY k);",
        dir.display()
    )
}

#[test]
fn a_long_query_shows_its_progress_in_a_terminal_only() {
    let dir = large_csv("progress", LARGE_ROWS);
    let mut terminal = Terminal::start();
    terminal.wait_for(0, "prompt", |t| t.contains("udf-sql> "));
    // Ctrl-C stops a query that computes without a pause, and the shell stays.
    let from = terminal.len();
    terminal.type_text(&format!("{}\r", long_query(&dir)));
    terminal.wait_for(from, "progress line", |t| t.contains(" rows/s"));
    terminal.answer("\x03", "cancellation", "Query cancelled");

    let from = terminal.len();
    terminal.type_text(&format!("{}\r", long_query(&dir)));
    // While it runs: rows and bytes read against the file's size, the time and the rate.
    // (The first lines may show nothing read yet: wait for one that shows a MiB or more.)
    let progress = terminal.wait_for(from, "progress line", |t| {
        t.split("\x1b[2K")
            .any(|line| line.contains(" MiB of ") && line.contains(" rows/s"))
    });
    let line = progress
        .split("\x1b[2K")
        .find(|line| line.contains(" MiB of ") && line.contains(" rows/s"))
        .unwrap_or_default();
    assert!(
        line.contains(" rows · ") && line.contains(" of 33.") && line.contains("%) · "),
        "{line}"
    );
    let result = terminal.wait_for(from, "result", |t| {
        t.contains("1 row in set") && t.contains("udf-sql> ")
    });
    let expected = format!("| {LARGE_ROWS} | {} |", LARGE_ROWS / 1000);
    assert!(result.contains(&expected), "{result}");
    assert!(!result.contains("[ERROR]"), "{result}");
    // The line is erased before the table prints.
    assert!(result.contains("\r\x1b[2K+---"), "{result}");
    terminal.type_text("\\q\r");

    // Piped output: the same query, no progress line anywhere.
    let (code, out, err) = udf_sql(&["-c", &long_query(&dir)]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&expected), "{out}");
    assert!(
        !out.contains("rows/s") && !err.contains("rows/s"),
        "{out}{err}"
    );
}

/// Runs `udf-sql` with `args`: its exit code, standard output and standard error.
fn udf_sql(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_udf-sql"))
        .args(args)
        .output()
        .expect("udf-sql runs");
    (
        output.status.code().expect("an exit code"),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn a_script_file_runs_statement_by_statement() {
    let script = std::env::temp_dir().join(format!("udf-sql-script-{}.sql", std::process::id()));
    std::fs::write(
        &script,
        "-- One processor per operator, so that plans read the same on every machine.
SET 'datafusion.execution.target_partitions' = '1';
-- DDL with Flink's watermark clause.
CREATE EXTERNAL TABLE timed (customer VARCHAR, ts TIMESTAMP,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
STORED AS CSV LOCATION 'unused.csv';
SHOW FUNCTIONS;
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT customer, COUNT(*) AS orders, string_concat(product, ', ') AS products
FROM orders
WHERE customer IN ('alice', 'bob')
GROUP BY customer
ORDER BY customer;
EXPLAIN SELECT * FROM counter(input => TABLE ticks PARTITION BY name);
",
    )
    .unwrap();
    let (code, out, err) = udf_sql(&["-f", script.to_str().unwrap()]);
    let _ = std::fs::remove_file(&script);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn exit_codes_tell_a_script_what_failed() {
    let statements = "SELECT 1 AS one; SELECT nope(1); SELECT 2 AS two;";
    let (code, out, err) = udf_sql(&["-c", statements]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("| one |") && !out.contains("two"), "{out}");
    assert!(err.contains("[ERROR]") && err.contains("nope"), "{err}");

    let (code, out, _) = udf_sql(&["-c", statements, "--continue"]);
    assert_eq!(code, 1, "a statement failed");
    assert!(out.contains("| two |"), "{out}");

    let (code, _, err) = udf_sql(&["--bogus"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown argument `--bogus`") && err.contains("usage"),
        "{err}"
    );
    let (code, _, err) = udf_sql(&["-f", "/no/such/file.sql"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read /no/such/file.sql"), "{err}");
}
