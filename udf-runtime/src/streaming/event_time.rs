//! Event time: the `on_time` column of a call, and the watermarks declared per table.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::Duration;

/// When a source emits its watermark (`max(time seen) - delay`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WatermarkEmission {
    /// After every row (deterministic; what Flink's conformance cases use).
    #[default]
    EveryRow,
    /// After every batch (cheaper; rows of a batch see the watermark of the batch before).
    EveryBatch,
}

/// A watermark declared on a table's time column.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WatermarkSpec {
    pub column: String,
    pub delay: Duration,
    pub emission: WatermarkEmission,
}

impl EventTime {
    /// Column `column` (named `name`) with the watermark `spec` declares for it.
    pub fn declared(name: &str, column: usize, spec: &WatermarkSpec) -> Self {
        EventTime {
            name: name.to_owned(),
            column,
            delay_millis: i64::try_from(spec.delay.as_millis()).unwrap_or(i64::MAX),
            emission: spec.emission,
        }
    }
}

/// The watermarks of a session's tables, by table name.
#[derive(Debug, Default)]
pub struct Watermarks {
    tables: RwLock<HashMap<String, WatermarkSpec>>,
}

impl Watermarks {
    pub fn declare(&self, table: &str, spec: WatermarkSpec) {
        let mut tables = self.tables.write().unwrap_or_else(|p| p.into_inner());
        tables.insert(table.to_lowercase(), spec);
    }

    /// The watermark declared on `column` of `table`.
    pub fn of(&self, table: &str, column: &str) -> Option<WatermarkSpec> {
        let tables = self.tables.read().unwrap_or_else(|p| p.into_inner());
        tables
            .get(&table.to_lowercase())
            .filter(|spec| spec.column.eq_ignore_ascii_case(column))
            .cloned()
    }
}

/// The event time of a call: where the time is and how watermarks follow it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventTime {
    /// The time column's name and position in the table argument's input.
    pub name: String,
    pub column: usize,
    pub delay_millis: i64,
    pub emission: WatermarkEmission,
}
