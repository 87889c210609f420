//! Flink's `table.` options in the session's configuration: the local time zone
//! (`SET 'table.local-time-zone' = 'Asia/Shanghai'`: an IANA zone or an offset such as
//! `+08:00`; default `UTC`), and the options of async functions
//! (`SET 'table.exec.async-scalar.max-concurrent-operations' = '5'`, or `set_option`).
//!
//! | key (after `table.exec.async-scalar.` / `table.exec.async-table.`) | value | default |
//! |---|---|---|
//! | `max-concurrent-operations` | calls in flight at once, ≥ 1 | 10 |
//! | `timeout` | per call, retries included (`1m`, `500 ms`, `PT3M`) | 3 min |
//! | `retry-strategy` | `NO_RETRY` or `FIXED_DELAY` | `FIXED_DELAY` |
//! | `retry-delay` | between attempts | 100 ms |
//! | `max-attempts` | attempts in all, ≥ 1 | 3 |

use std::time::Duration;

use datafusion::arrow::array::timezone::Tz;
use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::common::{DataFusionError, Result};
use datafusion::config::ConfigOptions;
use udf_core::types::parse_duration;
use udf_core::{AsyncOptions, RetryStrategy};

/// Flink's `table.` options: the local time zone, and async scalar and async table
/// functions' options.
#[derive(Clone, Debug, Default)]
pub struct TableOptions {
    scalar: Settings,
    table: Settings,
    /// `table.local-time-zone`, as given (checked when set); `None` is UTC.
    local_time_zone: Option<String>,
}

/// One function kind's settings as set; the retry settings apply with `FIXED_DELAY`.
#[derive(Clone, Copy, Debug)]
struct Settings {
    max_concurrent_operations: usize,
    timeout: Duration,
    fixed_delay: bool,
    retry_delay: Duration,
    max_attempts: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_concurrent_operations: 10,
            timeout: Duration::from_secs(180),
            fixed_delay: true,
            retry_delay: Duration::from_millis(100),
            max_attempts: 3,
        }
    }
}

impl Settings {
    fn options(&self) -> AsyncOptions {
        AsyncOptions {
            max_concurrent_operations: self.max_concurrent_operations,
            timeout: self.timeout,
            retry: if self.fixed_delay {
                RetryStrategy::FixedDelay {
                    delay: self.retry_delay,
                    max_attempts: self.max_attempts,
                }
            } else {
                RetryStrategy::NoRetry
            },
        }
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "max-concurrent-operations" => self.max_concurrent_operations = positive(value)?,
            "timeout" => {
                self.timeout = parse_duration(value)?;
                if self.timeout.is_zero() {
                    return Err(format!(
                        "`{value}`: a timeout must be longer than 0, or every call would fail"
                    ));
                }
            }
            "retry-strategy" => {
                self.fixed_delay = match value.trim().to_ascii_uppercase().as_str() {
                    "FIXED_DELAY" => true,
                    "NO_RETRY" => false,
                    _ => return Err(format!("`{value}` is not NO_RETRY or FIXED_DELAY")),
                }
            }
            "retry-delay" => self.retry_delay = parse_duration(value)?,
            "max-attempts" => self.max_attempts = positive(value)?,
            _ => return Err("no such option".to_owned()),
        }
        Ok(())
    }

    fn entries(&self, prefix: &str) -> Vec<ConfigEntry> {
        let entry = |key: &str, value: String, description: &'static str| ConfigEntry {
            key: format!("{prefix}.{key}"),
            value: Some(value),
            description,
        };
        vec![
            entry(
                "max-concurrent-operations",
                self.max_concurrent_operations.to_string(),
                "calls in flight at once",
            ),
            entry(
                "timeout",
                format!("{} ms", self.timeout.as_millis()),
                "time for one call, retries included",
            ),
            entry(
                "retry-strategy",
                if self.fixed_delay {
                    "FIXED_DELAY"
                } else {
                    "NO_RETRY"
                }
                .to_owned(),
                "NO_RETRY or FIXED_DELAY",
            ),
            entry(
                "retry-delay",
                format!("{} ms", self.retry_delay.as_millis()),
                "time between attempts (FIXED_DELAY)",
            ),
            entry(
                "max-attempts",
                self.max_attempts.to_string(),
                "attempts in all (FIXED_DELAY)",
            ),
        ]
    }
}

impl TableOptions {
    /// `table.local-time-zone` in `options`; `None` when not set (UTC).
    pub fn local_time_zone(options: &ConfigOptions) -> Option<Tz> {
        let zone = options
            .extensions
            .get::<TableOptions>()?
            .local_time_zone
            .as_ref()?;
        zone.parse().ok()
    }

    /// The options of async scalar functions in `options` (defaults if absent).
    pub fn async_scalar(options: &ConfigOptions) -> AsyncOptions {
        options
            .extensions
            .get::<TableOptions>()
            .map_or_else(|| Settings::default().options(), |c| c.scalar.options())
    }

    /// The options of async table functions in `options` (defaults if absent).
    pub fn async_table(options: &ConfigOptions) -> AsyncOptions {
        options
            .extensions
            .get::<TableOptions>()
            .map_or_else(|| Settings::default().options(), |c| c.table.options())
    }
}

impl ConfigExtension for TableOptions {
    const PREFIX: &'static str = "table";
}

impl ExtensionOptions for TableOptions {
    extension_options_basics!();

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        if key == "local-time-zone" {
            let zone = value.trim();
            zone.parse::<Tz>().map_err(|e| {
                DataFusionError::Configuration(format!(
                    "table.local-time-zone: `{zone}` is no time zone ({e}); give an IANA name such as `Asia/Shanghai` or an offset such as `+08:00`"
                ))
            })?;
            self.local_time_zone = Some(zone.to_owned());
            return Ok(());
        }
        let (settings, option) = if let Some(option) = key.strip_prefix("exec.async-scalar.") {
            (&mut self.scalar, option)
        } else if let Some(option) = key.strip_prefix("exec.async-table.") {
            (&mut self.table, option)
        } else {
            return Err(unknown(key));
        };
        settings.set(option, value).map_err(|reason| {
            if reason == "no such option" {
                unknown(key)
            } else {
                DataFusionError::Configuration(format!("table.{key}: {reason}"))
            }
        })
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        let mut entries = vec![ConfigEntry {
            key: "table.local-time-zone".to_owned(),
            value: Some(
                self.local_time_zone
                    .clone()
                    .unwrap_or_else(|| "UTC".to_owned()),
            ),
            description: "the session time zone TIMESTAMP_LTZ values are seen in",
        }];
        entries.extend(self.scalar.entries("table.exec.async-scalar"));
        entries.extend(self.table.entries("table.exec.async-table"));
        entries
    }
}

fn unknown(key: &str) -> DataFusionError {
    DataFusionError::Configuration(format!(
        "unknown option `table.{key}`; the `table.` options are table.local-time-zone, and \
         table.exec.async-scalar.* and table.exec.async-table.* with max-concurrent-operations, \
         timeout, retry-strategy, retry-delay and max-attempts"
    ))
}

fn positive(value: &str) -> Result<usize, String> {
    match value.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{value}` is not a whole number of at least 1")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_validated() {
        let mut config = TableOptions::default();
        config
            .set("exec.async-scalar.max-concurrent-operations", "5")
            .unwrap();
        config
            .set("exec.async-table.retry-strategy", "no_retry")
            .unwrap();
        let options = ConfigOptions::new().with_extensions({
            let mut extensions = datafusion::config::Extensions::new();
            extensions.insert(config.clone());
            extensions
        });
        assert_eq!(
            TableOptions::async_scalar(&options).max_concurrent_operations,
            5
        );
        assert_eq!(
            TableOptions::async_table(&options).retry,
            RetryStrategy::NoRetry
        );
        let error = config
            .set("exec.async-scalar.max-concurrent-operations", "0")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("is not a whole number of at least 1"),
            "{error}"
        );
        let error = config
            .set("exec.async-scalar.speed", "1")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("unknown option `table.exec.async-scalar.speed`"),
            "{error}"
        );
    }
}
