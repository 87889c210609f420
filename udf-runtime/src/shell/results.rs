//! Printing results as Flink's SQL client does (`sql-client.execution.result-mode`):
//!
//! - `table`: a bounded result as one table once complete; an unbounded one row by row as it
//!   comes (a terminal shell cannot redraw a live table in place).
//! - `tableau`: rows as they come in a bordered table — with their row kind (`op`) when the
//!   result is unbounded, as Flink's streaming mode shows them.
//! - `changelog`: rows as they come with their row kind, without borders.
//!
//! A changelog result (a GROUP BY over a stream, ...) carries each row's kind in its row-kind
//! column: `tableau` and `changelog` show it as `op`; `table` shows a bounded changelog
//! applied (the table it leaves) and an unbounded one row by row with `op`, as a terminal
//! cannot update rows in place. Column widths come from the header and the first rows; a
//! later value that is wider widens only its own line.

use std::fmt::Write as _;
use std::str::FromStr;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::Schema;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::common::{DataFusionError, Result};

use super::console::Console;
use crate::changelog;

/// `sql-client.execution.result-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResultMode {
    #[default]
    Table,
    Tableau,
    Changelog,
}

impl FromStr for ResultMode {
    type Err = DataFusionError;

    fn from_str(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "table" => Ok(ResultMode::Table),
            "tableau" => Ok(ResultMode::Tableau),
            "changelog" => Ok(ResultMode::Changelog),
            other => Err(DataFusionError::Plan(format!(
                "'{other}' is not a result mode: sql-client.execution.result-mode takes \
                 'table', 'tableau' or 'changelog'"
            ))),
        }
    }
}

/// How a NULL prints (as in Flink's client).
const NULL: &str = "<NULL>";

/// Prints one query's rows as they come.
pub struct RowPrinter {
    /// The row kind column.
    op: bool,

    borders: bool,
    /// Bounded results end with "N rows in set", unbounded ones with a count of rows received.
    bounded: bool,
    headers: Vec<String>,
    widths: Vec<usize>,
    /// Numbers align right, everything else left.
    right: Vec<bool>,
    started: bool,
    rows: usize,
}

impl RowPrinter {
    pub fn new(mode: ResultMode, schema: &Schema, bounded: bool) -> Self {
        let kinds = changelog::row_kind_index(schema);
        let op = match mode {
            // A bounded changelog prints applied (see `applied`).
            ResultMode::Table => kinds.is_some() && !bounded,
            ResultMode::Tableau => !bounded || kinds.is_some(),
            ResultMode::Changelog => true,
        };
        let shown = || {
            schema
                .fields()
                .iter()
                .enumerate()
                .filter(move |(i, _)| Some(*i) != kinds)
                .map(|(_, f)| f)
        };
        let mut headers: Vec<String> = shown().map(|f| f.name().clone()).collect();
        let mut right: Vec<bool> = shown().map(|f| f.data_type().is_numeric()).collect();
        if op {
            headers.insert(0, "op".to_owned());
            right.insert(0, false);
        }
        RowPrinter {
            op,
            borders: mode != ResultMode::Changelog,
            bounded,
            widths: headers.iter().map(|h| h.chars().count()).collect(),
            headers,
            right,
            started: false,
            rows: 0,
        }
    }

    /// Prints `batches` (widths from all of them, if not started yet).
    pub fn print(&mut self, batches: &[RecordBatch], console: &mut dyn Console) -> Result<()> {
        let mut lines = Vec::new();
        for batch in batches {
            lines.extend(cells(batch, self.op)?);
        }
        if !self.started {
            for line in &lines {
                for (width, cell) in self.widths.iter_mut().zip(line) {
                    *width =
                        (*width).max(cell.lines().map(|l| l.chars().count()).max().unwrap_or(0));
                }
            }
            self.start(console);
        }
        let mut text = String::new();
        for line in &lines {
            self.line(&mut text, line);
        }
        self.rows += lines.len();
        console.out(&text);
        Ok(())
    }

    fn start(&mut self, console: &mut dyn Console) {
        self.started = true;
        let mut text = String::new();
        self.border(&mut text);
        let headers = self.headers.clone();
        self.line(&mut text, &headers);
        self.border(&mut text);
        console.out(&text);
    }

    /// Closes the table and prints the count.
    pub fn finish(mut self, console: &mut dyn Console) {
        if self.rows == 0 && !self.started {
            console.out(if self.bounded {
                "Empty set\n"
            } else {
                "Received a total of 0 rows\n"
            });
            return;
        }
        if !self.started {
            self.start(console);
        }
        let mut text = String::new();
        self.border(&mut text);
        let rows = self.rows;
        let plural = if rows == 1 { "" } else { "s" };
        if self.bounded {
            let _ = writeln!(text, "{rows} row{plural} in set");
        } else {
            let _ = writeln!(text, "Received a total of {rows} row{plural}");
        }
        console.out(&text);
    }

    /// Ends a result cut short (Ctrl-C).
    pub fn cancel(mut self, console: &mut dyn Console) {
        let mut text = String::new();
        if self.started {
            self.border(&mut text);
        }
        let _ = writeln!(text, "Query cancelled after {} rows", self.rows);
        self.started = false;
        console.out(&text);
    }

    fn border(&self, text: &mut String) {
        if !self.borders {
            return;
        }
        for width in &self.widths {
            text.push('+');
            text.push_str(&"-".repeat(width + 2));
        }
        text.push_str("+\n");
    }

    /// One row; a cell of several lines (a plan in EXPLAIN) takes as many lines.
    fn line(&self, text: &mut String, cells: &[String]) {
        let height = cells
            .iter()
            .map(|c| c.lines().count())
            .max()
            .unwrap_or(1)
            .max(1);
        for at in 0..height {
            for ((width, cell), right) in self.widths.iter().zip(cells).zip(&self.right) {
                let cell = cell.lines().nth(at).unwrap_or("");
                let lead = if self.borders { "| " } else { " " };
                let trail = if self.borders { " " } else { "" };
                let _ = if *right {
                    write!(text, "{lead}{cell:>width$}{trail}")
                } else {
                    write!(text, "{lead}{cell:<width$}{trail}")
                };
            }
            text.push_str(if self.borders { "|\n" } else { "\n" });
        }
    }
}

/// Bounded `batches` of a changelog as the table they leave (the `table` mode); other
/// results as they are.
pub fn applied(batches: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
    match batches.first() {
        Some(first) if changelog::row_kind_index(&first.schema()).is_some() => {
            Ok(vec![changelog::materialize(&batches)?])
        }
        _ => Ok(batches),
    }
}

/// Each row of `batch` as its printed cells, the row kind first with `op` (`+I` for a
/// result without kinds); a changelog's row-kind column is not a cell of its own.
fn cells(batch: &RecordBatch, op: bool) -> Result<Vec<Vec<String>>> {
    let kinds = changelog::row_kind_index(&batch.schema());
    let options = FormatOptions::default().with_null(NULL);
    let formatters = batch
        .columns()
        .iter()
        .map(|column| ArrayFormatter::try_new(column.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()?;
    let kind_column = kinds.and_then(|k| batch.columns().get(k));
    Ok((0..batch.num_rows())
        .map(|row| {
            let mut line = Vec::with_capacity(formatters.len() + usize::from(op));
            if op {
                line.push(match kind_column {
                    Some(kinds) => ArrayFormatter::try_new(kinds.as_ref(), &options)
                        .map(|f| f.value(row).to_string())
                        .unwrap_or_default(),
                    None => "+I".to_owned(),
                });
            }
            line.extend(
                formatters
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| Some(*i) != kinds)
                    .map(|(_, f)| f.value(row).to_string()),
            );
            line
        })
        .collect())
}
