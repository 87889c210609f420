//! The progress line of a long bounded query in the terminal: rows and bytes read against the
//! totals the files' metadata gives, the time so far and the rate —
//!
//! ```text
//! 1,250,000 of 4,000,000 rows · 21.4 MiB of 68.7 MiB (31%) · 2.5 s · 500,000 rows/s
//! ```
//!
//! Rows read are the sources' output rows (their live metrics); bytes read are counted by the
//! store in front of the local file system (`read_bytes.rs`). The line shows only when standard
//! output and error are a terminal, and only once a query has run a moment.

pub mod read_bytes;

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::ExecutionPlan;

use super::console::Console;

/// How long a query runs before its progress shows.
pub const SHOW_AFTER: Duration = Duration::from_millis(500);
/// How often the line is redrawn.
pub const REDRAW_EVERY: Duration = Duration::from_millis(200);

/// A tick every [`REDRAW_EVERY`], from a thread of its own until the receiver is dropped. Not
/// the runtime's timer: its workers drive it between tasks, and a query's operators can
/// compute for seconds in one poll, so its ticks came seconds late.
pub fn redraw_ticks() -> tokio::sync::mpsc::Receiver<()> {
    let (sender, receiver) = tokio::sync::mpsc::channel(1);
    std::thread::spawn(move || {
        while sender.blocking_send(()).is_ok() {
            std::thread::sleep(REDRAW_EVERY);
        }
    });
    receiver
}

/// What a running query has read, against what it will read.
pub struct Progress {
    /// The plan's sources, whose output rows are the rows read.
    sources: Vec<Arc<dyn ExecutionPlan>>,
    total_rows: Option<usize>,
    total_bytes: Option<u64>,
    read: Arc<AtomicU64>,
    read_before: u64,
    started: Instant,
}

impl Progress {
    /// Follows `plan`, whose file reads `read` counts (it counts on from its current value).
    pub fn of(plan: &Arc<dyn ExecutionPlan>, read: Arc<AtomicU64>) -> Self {
        let mut sources = Vec::new();
        collect_sources(plan, &mut sources);
        let mut total_rows = Some(0usize);
        let mut total_bytes = None::<u64>;
        for source in &sources {
            let totals = file_totals(source.as_ref());
            // Rows are known only if every source knows its own.
            let rows = totals.and_then(|(rows, _)| rows);
            total_rows = total_rows.zip(rows).map(|(a, b)| a + b);
            if let Some((_, bytes)) = totals {
                *total_bytes.get_or_insert(0) += bytes;
            }
        }
        let read_before = read.load(Ordering::Relaxed);
        Progress {
            sources,
            total_rows,
            total_bytes,
            read,
            read_before,
            started: Instant::now(),
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The line as it stands now.
    pub fn line(&self) -> String {
        let rows: usize = self
            .sources
            .iter()
            .filter_map(|source| source.metrics()?.output_rows())
            .sum();
        let bytes = self.read.load(Ordering::Relaxed) - self.read_before;
        render(
            Reading {
                rows,
                total_rows: self.total_rows,
                bytes,
                total_bytes: self.total_bytes,
            },
            self.elapsed(),
        )
    }
}

/// The plan's leaves: where its rows come from.
fn collect_sources(plan: &Arc<dyn ExecutionPlan>, sources: &mut Vec<Arc<dyn ExecutionPlan>>) {
    if plan.children().is_empty() {
        sources.push(Arc::clone(plan));
    }
    for child in plan.children() {
        collect_sources(child, sources);
    }
}

/// The rows (if every file's metadata tells) and bytes a file scan will read: its files, or
/// the parts of them it was given.
fn file_totals(source: &dyn ExecutionPlan) -> Option<(Option<usize>, u64)> {
    let scan = (source as &dyn Any).downcast_ref::<DataSourceExec>()?;
    let config = (scan.data_source().as_ref() as &dyn Any).downcast_ref::<FileScanConfig>()?;
    let files: Vec<_> = config
        .file_groups
        .iter()
        .flat_map(|group| group.files())
        .collect();
    let bytes = files
        .iter()
        .map(|file| match &file.range {
            Some(range) => (range.end - range.start).max(0) as u64,
            None => file.object_meta.size,
        })
        .sum();
    // A file cut into parts is counted once.
    let mut rows_of: HashMap<&str, Option<usize>> = HashMap::new();
    for file in &files {
        let rows = file
            .statistics
            .as_ref()
            .and_then(|statistics| statistics.num_rows.get_value().copied());
        rows_of.insert(file.object_meta.location.as_ref(), rows);
    }
    let rows = rows_of.values().copied().sum::<Option<usize>>();
    Some((rows, bytes))
}

/// The line in the terminal: drawn once the query has run [`SHOW_AFTER`], cleared before
/// anything else prints.
pub struct ProgressLine {
    progress: Progress,
    shown: bool,
}

impl ProgressLine {
    pub fn new(progress: Progress) -> Self {
        ProgressLine {
            progress,
            shown: false,
        }
    }

    pub fn redraw(&mut self, console: &mut dyn Console) {
        if self.progress.elapsed() >= SHOW_AFTER {
            console.status(&self.progress.line());
            self.shown = true;
        }
    }

    pub fn clear(&mut self, console: &mut dyn Console) {
        if std::mem::take(&mut self.shown) {
            console.status("");
        }
    }
}

/// One reading of a query's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub rows: usize,
    pub total_rows: Option<usize>,
    pub bytes: u64,
    pub total_bytes: Option<u64>,
}

/// `reading` after `elapsed`, as the line shows it.
pub fn render(reading: Reading, elapsed: Duration) -> String {
    let mut line = match reading.total_rows {
        Some(total) => format!("{} of {} rows", grouped(reading.rows), grouped(total)),
        None => format!("{} rows", grouped(reading.rows)),
    };
    if let Some(total) = reading.total_bytes {
        // Counting starts at the first byte: a file read whole counts once.
        let bytes = reading.bytes.min(total);
        let percent = (bytes * 100).checked_div(total).unwrap_or(100);
        line.push_str(&format!(
            " · {} of {} ({percent}%)",
            size(bytes),
            size(total)
        ));
    }
    let seconds = elapsed.as_secs_f64();
    line.push_str(&format!(" · {seconds:.1} s"));
    if seconds > 0.0 {
        let rate = (reading.rows as f64 / seconds) as usize;
        line.push_str(&format!(" · {} rows/s", grouped(rate)));
    }
    line
}

/// `1234567` as `1,234,567`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut text = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_gives_rows_and_bytes_against_their_totals_time_and_rate() {
        let reading = Reading {
            rows: 1_250_000,
            total_rows: Some(4_000_000),
            bytes: 22_440_000,
            total_bytes: Some(72_000_000),
        };
        assert_eq!(
            render(reading, Duration::from_millis(2500)),
            "1,250,000 of 4,000,000 rows · 21.4 MiB of 68.7 MiB (31%) · 2.5 s · 500,000 rows/s"
        );
    }

    #[test]
    fn unknown_totals_are_left_out() {
        let reading = Reading {
            rows: 999,
            total_rows: None,
            bytes: 0,
            total_bytes: None,
        };
        assert_eq!(
            render(reading, Duration::from_secs(2)),
            "999 rows · 2.0 s · 499 rows/s"
        );
        let csv = Reading {
            rows: 12_345,
            total_rows: None,
            bytes: 512,
            total_bytes: Some(2048),
        };
        assert_eq!(
            render(csv, Duration::from_secs(1)),
            "12,345 rows · 512 B of 2.0 KiB (25%) · 1.0 s · 12,345 rows/s"
        );
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(123_456_789), "123,456,789");
    }
}
