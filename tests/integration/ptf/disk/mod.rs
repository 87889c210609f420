//! The disk backend (`SET 'state.backend.type' = 'fjall'`): PTF state beyond the memory budget
//! lives in a store on local disk, with the results of the in-memory backend. The runs whose
//! point is memory run in a child process, so that other tests' allocations do not count, and
//! read their peak resident memory from the OS.

mod keys;
mod map_view;
mod timers;

use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A root directory of the test's own, empty.
fn scratch(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("udf-disk-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    root
}

pub(super) use crate::support::use_disk;

/// Set in a child process started by [`in_child`].
const CHILD: &str = "UDF_DISK_CHILD";

/// Whether this process is the child of [`in_child`].
fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs test `test` (its path under `ptf::disk`) alone in a child process and gives the
/// `name=value` figures of the line it printed starting with `figures`.
fn in_child(test: &str) -> Figures {
    let mut command = std::process::Command::new(std::env::current_exe().expect("the test binary"));
    command.args(["--exact", &format!("ptf::disk::{test}"), "--nocapture"]);
    run_child(command)
}

/// [`in_child`] with the signal a write past the file size limit sends ignored, so such a
/// write fails with an error instead of ending the child (see [`limit_file_size`]).
fn in_child_ignoring_file_size_signal(test: &str) -> Figures {
    let mut command = std::process::Command::new("sh");
    command.args([
        "-c",
        "trap '' XFSZ; exec \"$0\" \"$@\"",
        std::env::current_exe()
            .expect("the test binary")
            .to_str()
            .expect("a UTF-8 path"),
        "--exact",
        &format!("ptf::disk::{test}"),
        "--nocapture",
    ]);
    run_child(command)
}

/// From now on, no file of this process may grow past `bytes`: a write beyond fails as a
/// write to a full disk does (util-linux's `prlimit` sets the limit on this process).
fn limit_file_size(bytes: u64) {
    let status = std::process::Command::new("prlimit")
        .args([
            "--pid",
            &std::process::id().to_string(),
            &format!("--fsize={bytes}:{bytes}"),
        ])
        .status()
        .expect("prlimit (util-linux) runs");
    assert!(status.success(), "prlimit: {status}");
}

/// The longest a child may take: a hang is a failure, not a stuck run. The larger runs the
/// flags ask for set their own (`UDF_DISK_CHILD_SECONDS`).
fn child_limit() -> Duration {
    let seconds = std::env::var("UDF_DISK_CHILD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    Duration::from_secs(seconds)
}

fn run_child(mut command: std::process::Command) -> Figures {
    let mut child = command
        .env(CHILD, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the child starts");
    // Read its output on threads, so a full pipe cannot stall it while it is waited for.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let (started, limit) = (Instant::now(), child_limit());
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (out.join().expect("stdout"), err.join().expect("stderr"));
    assert!(status.success(), "{status}\n{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("figures "))
        .unwrap_or_else(|| panic!("the child's figures in\n{stdout}"));
    println!("{line}");
    Figures(line.to_owned())
}

/// A child's figures: `figures a=1 b=2`.
struct Figures(String);

impl Figures {
    fn get(&self, name: &str) -> u64 {
        self.0
            .split_whitespace()
            .find_map(|part| part.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no figure {name} in {}", self.0))
    }
}

/// This process's peak resident memory in bytes (Linux's `VmHWM`), since it started or since
/// [`reset_peak_resident`].
fn peak_resident_bytes() -> u64 {
    status_bytes("VmHWM")
}

/// This process's resident memory in bytes (Linux's `VmRSS`).
fn resident_bytes() -> u64 {
    status_bytes("VmRSS")
}

/// Starts the peak over from the resident memory now (Linux: `5` into `clear_refs`).
fn reset_peak_resident() {
    std::fs::write("/proc/self/clear_refs", "5").expect("/proc/self/clear_refs");
}

/// Figure `name` of `/proc/self/status`, in bytes.
fn status_bytes(name: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} in /proc/self/status"));
    kb << 10
}
