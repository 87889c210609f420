//! Checkpoint settings, with Flink's keys (SQL `SET` or `Session::set_option`):
//!
//! ```sql
//! SET 'execution.checkpointing.interval' = '10 s';        -- turns checkpoints on
//! SET 'execution.checkpointing.dir' = '/var/lib/udf/checkpoints';
//! SET 'execution.checkpointing.num-retained' = '3';       -- complete checkpoints kept (1)
//! SET 'execution.checkpointing.tolerable-failed-checkpoints' = '2';   -- (0)
//! SET 'execution.checkpointing.timeout' = '1 min';        -- (10 min)
//! SET 'execution.state-recovery.path' = '/var/lib/udf/checkpoints/counts/chk-42';
//! ```

use std::path::PathBuf;
use std::time::Duration;

use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::common::{DataFusionError, Result};
use datafusion::config::ConfigOptions;
use udf_core::types::parse_duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointConfig {
    /// Checkpoints are taken this often; none without it.
    pub interval: Option<Duration>,
    /// Where checkpoints are written: `<dir>/<uid>/chk-<id>`.
    pub dir: Option<PathBuf>,
    pub num_retained: usize,
    /// Failed checkpoints in a row that a query survives.
    pub tolerable_failed: u32,
    /// A checkpoint not complete after this has failed.
    pub timeout: Duration,
    /// The checkpoint or savepoint a query starts from.
    pub recovery_path: Option<PathBuf>,
}

impl Default for CheckpointConfig {
    fn default() -> Self {
        CheckpointConfig {
            interval: None,
            dir: None,
            num_retained: 1,
            tolerable_failed: 0,
            timeout: Duration::from_secs(600),
            recovery_path: None,
        }
    }
}

impl CheckpointConfig {
    /// The settings in `options` (defaults if absent).
    pub fn of(options: &ConfigOptions) -> Self {
        options
            .extensions
            .get::<CheckpointConfig>()
            .cloned()
            .unwrap_or_default()
    }

    /// Whether queries run with barriers: checkpoints are on, or the query restores.
    pub fn enabled(&self) -> bool {
        self.interval.is_some() || self.recovery_path.is_some()
    }
}

impl ConfigExtension for CheckpointConfig {
    const PREFIX: &'static str = "execution";
}

const KEYS: &str = "execution.checkpointing.interval, execution.checkpointing.dir, \
    execution.checkpointing.num-retained, execution.checkpointing.tolerable-failed-checkpoints, \
    execution.checkpointing.timeout and execution.state-recovery.path";

impl ExtensionOptions for CheckpointConfig {
    extension_options_basics!();

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let invalid =
            |reason: String| DataFusionError::Configuration(format!("execution.{key}: {reason}"));
        let path = |value: &str| {
            let value = value.trim();
            if value.is_empty() {
                return Err(invalid("the path is empty".to_owned()));
            }
            Ok(PathBuf::from(
                value.strip_prefix("file://").unwrap_or(value),
            ))
        };
        let count = |value: &str| {
            value
                .trim()
                .parse::<u32>()
                .map_err(|_| invalid(format!("`{value}` is not a count")))
        };
        match key {
            "checkpointing.interval" => {
                let interval = parse_duration(value).map_err(invalid)?;
                // Flink turns checkpoints off with a zero (or negative) interval.
                self.interval = (!interval.is_zero()).then_some(interval);
            }
            "checkpointing.dir" => self.dir = Some(path(value)?),
            "checkpointing.num-retained" => {
                let retained = count(value)?;
                if retained == 0 {
                    return Err(invalid("at least one checkpoint is kept".to_owned()));
                }
                self.num_retained = retained as usize;
            }
            "checkpointing.tolerable-failed-checkpoints" => {
                self.tolerable_failed = count(value)?;
            }
            "checkpointing.timeout" => {
                let timeout = parse_duration(value).map_err(invalid)?;
                if timeout.is_zero() {
                    return Err(invalid("a checkpoint needs some time".to_owned()));
                }
                self.timeout = timeout;
            }
            "state-recovery.path" => self.recovery_path = Some(path(value)?),
            _ => {
                return Err(DataFusionError::Configuration(format!(
                    "unknown option `execution.{key}`; the `execution.` options are {KEYS}"
                )));
            }
        }
        Ok(())
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        let entry = |key: &str, value: Option<String>, description: &'static str| ConfigEntry {
            key: format!("execution.{key}"),
            value,
            description,
        };
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        vec![
            entry(
                "checkpointing.interval",
                self.interval.map(|i| format!("{} ms", i.as_millis())),
                "how often checkpoints are taken (none when unset)",
            ),
            entry(
                "checkpointing.dir",
                path(&self.dir),
                "where checkpoints are written",
            ),
            entry(
                "checkpointing.num-retained",
                Some(self.num_retained.to_string()),
                "complete checkpoints kept",
            ),
            entry(
                "checkpointing.tolerable-failed-checkpoints",
                Some(self.tolerable_failed.to_string()),
                "failed checkpoints in a row a query survives",
            ),
            entry(
                "checkpointing.timeout",
                Some(format!("{} ms", self.timeout.as_millis())),
                "time after which a checkpoint under way has failed",
            ),
            entry(
                "state-recovery.path",
                path(&self.recovery_path),
                "the checkpoint or savepoint a query starts from",
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_as_flink_writes_them_and_bad_ones_name_the_key() {
        let mut config = CheckpointConfig::default();
        assert!(!config.enabled());
        config.set("checkpointing.interval", "50 ms").unwrap();
        config.set("checkpointing.dir", "file:///tmp/ck").unwrap();
        config.set("checkpointing.num-retained", "3").unwrap();
        assert_eq!(config.interval, Some(Duration::from_millis(50)));
        assert_eq!(config.dir, Some(PathBuf::from("/tmp/ck")));
        assert_eq!(config.num_retained, 3);
        assert!(config.enabled());
        config.set("checkpointing.interval", "0 s").unwrap();
        assert!(!config.enabled());
        let error = |key: &str, value: &str| {
            CheckpointConfig::default()
                .set(key, value)
                .unwrap_err()
                .to_string()
        };
        assert!(error("checkpointing.num-retained", "0").contains("at least one"));
        assert!(error("checkpointing.num-retained", "many").contains("`many` is not a count"));
        assert!(error("checkpointing.dir", "  ").contains("execution.checkpointing.dir"));
        assert!(error("checkpointing.mode", "x").contains("unknown option"));
    }
}
