//! The disk backend (`SET 'state.backend.type' = 'fjall'`): PTF state beyond the memory budget
//! lives in a store on local disk, with the results of the in-memory backend. The runs whose
//! point is memory run in a child process, so that other tests' allocations do not count, and
//! read their peak resident memory from the OS.

mod keys;
mod map_view;
mod timers;

use std::path::{Path, PathBuf};

use udf_runtime::Session;

/// A root directory of the test's own, empty.
fn scratch(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("udf-disk-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    root
}

fn use_disk(session: &Session, root: &Path, budget: &str) {
    session.set_option("state.backend.type", "fjall").unwrap();
    session
        .set_option("state.backend.fjall.localdir", root.to_str().unwrap())
        .unwrap();
    session
        .set_option("state.backend.fjall.memory-budget", budget)
        .unwrap();
}

/// Set in a child process started by [`in_child`].
const CHILD: &str = "UDF_DISK_CHILD";

/// Whether this process is the child of [`in_child`].
fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs test `test` (its path under `ptf::disk`) alone in a child process and gives the
/// `name=value` figures of the line it printed starting with `figures`.
fn in_child(test: &str) -> Figures {
    let output = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", &format!("ptf::disk::{test}"), "--nocapture"])
        .env(CHILD, "1")
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
