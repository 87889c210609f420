//! Where PTF state is kept, with Flink's key (SQL `SET` or `Session::set_option`):
//!
//! ```sql
//! SET 'state.backend.type' = 'fjall';                       -- or 'hashmap', the default
//! SET 'state.backend.fjall.localdir' = '/var/tmp/state';    -- default: the system's temp dir
//! SET 'state.backend.fjall.memory-budget' = '64 mb';        -- per query, over its processors
//! SET 'state.backend.fjall.keep-directory' = 'true';        -- keep a run's store afterwards
//! ```
//!
//! `hashmap` keeps every key's state in memory; `fjall` keeps the keys beyond the budget in
//! an embedded LSM store on local disk (`streaming/state/disk/`).

use std::path::PathBuf;

use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::common::{DataFusionError, Result};
use datafusion::config::ConfigOptions;

/// The smallest budget: one key's state.
const MIN_BUDGET: u64 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendType {
    #[default]
    HashMap,
    Fjall,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateBackendConfig {
    pub backend: BackendType,
    pub localdir: Option<PathBuf>,
    pub memory_budget: u64,
    pub keep_directory: bool,
}

impl Default for StateBackendConfig {
    fn default() -> Self {
        StateBackendConfig {
            backend: BackendType::HashMap,
            localdir: None,
            memory_budget: 64 << 20,
            keep_directory: false,
        }
    }
}

impl StateBackendConfig {
    /// The settings in `options` (defaults if absent).
    pub fn of(options: &ConfigOptions) -> Self {
        options
            .extensions
            .get::<StateBackendConfig>()
            .cloned()
            .unwrap_or_default()
    }

    /// The root directory of the disk stores.
    pub fn root(&self) -> PathBuf {
        self.localdir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("udf-state"))
    }
}

impl ConfigExtension for StateBackendConfig {
    const PREFIX: &'static str = "state";
}

impl ExtensionOptions for StateBackendConfig {
    extension_options_basics!();

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let invalid =
            |reason: String| DataFusionError::Configuration(format!("state.{key}: {reason}"));
        match key {
            "backend.type" | "backend" => {
                self.backend = match value.trim().to_ascii_lowercase().as_str() {
                    "hashmap" => BackendType::HashMap,
                    "fjall" => BackendType::Fjall,
                    _ => {
                        return Err(invalid(format!(
                            "`{value}` is no state backend; the backends are `hashmap` (in memory) and `fjall` (on local disk)"
                        )));
                    }
                }
            }
            "backend.fjall.localdir" => {
                if value.trim().is_empty() {
                    return Err(invalid("the directory is empty".to_owned()));
                }
                self.localdir = Some(PathBuf::from(value.trim()));
            }
            "backend.fjall.memory-budget" => {
                self.memory_budget = parse_memory_size(value).map_err(invalid)?;
            }
            "backend.fjall.keep-directory" => {
                self.keep_directory = match value.trim().to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(invalid(format!("`{value}` is not `true` or `false`"))),
                }
            }
            _ => {
                return Err(DataFusionError::Configuration(format!(
                    "unknown option `state.{key}`; the `state.` options are state.backend.type, \
                     state.backend.fjall.localdir, state.backend.fjall.memory-budget and \
                     state.backend.fjall.keep-directory"
                )));
            }
        }
        Ok(())
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        let entry = |key: &str, value: Option<String>, description: &'static str| ConfigEntry {
            key: format!("state.{key}"),
            value,
            description,
        };
        vec![
            entry(
                "backend.type",
                Some(match self.backend {
                    BackendType::HashMap => "hashmap".to_owned(),
                    BackendType::Fjall => "fjall".to_owned(),
                }),
                "where PTF state is kept: hashmap (memory) or fjall (local disk)",
            ),
            entry(
                "backend.fjall.localdir",
                self.localdir.as_ref().map(|p| p.display().to_string()),
                "the directory under which each run keeps its disk store",
            ),
            entry(
                "backend.fjall.memory-budget",
                Some(format!("{} b", self.memory_budget)),
                "memory for state in memory, per query",
            ),
            entry(
                "backend.fjall.keep-directory",
                Some(self.keep_directory.to_string()),
                "whether a run's store stays on disk after it",
            ),
        ]
    }
}

/// Flink's memory sizes: a number of bytes, or with `b`, `kb`/`k`, `mb`/`m`, `gb`/`g`, `tb`/`t`
/// (binary multiples, as Flink's `MemorySize`).
fn parse_memory_size(text: &str) -> std::result::Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a memory size such as `64 mb`"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" | "bytes" => 0,
        "k" | "kb" | "kibibytes" => 10,
        "m" | "mb" | "mebibytes" => 20,
        "g" | "gb" | "gibibytes" => 30,
        "t" | "tb" | "tebibytes" => 40,
        other => {
            return Err(format!(
                "`{other}` is not a unit of memory (b, kb, mb, gb, tb)"
            ));
        }
    };
    let bytes = number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("`{text}` is more memory than can be counted"))?;
    if bytes < MIN_BUDGET {
        return Err(format!(
            "`{text}` is less than the smallest budget, {MIN_BUDGET} bytes"
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_validated_with_messages_naming_the_key() {
        let mut config = StateBackendConfig::default();
        config.set("backend.type", "FJALL").unwrap();
        config.set("backend.fjall.memory-budget", "64 mb").unwrap();
        config.set("backend.fjall.keep-directory", "true").unwrap();
        assert_eq!(config.backend, BackendType::Fjall);
        assert_eq!(config.memory_budget, 64 << 20);
        assert!(config.keep_directory);
        let error = |key: &str, value: &str| {
            StateBackendConfig::default()
                .set(key, value)
                .unwrap_err()
                .to_string()
        };
        assert!(error("backend.type", "rocksdb").contains("`rocksdb` is no state backend"));
        assert!(error("backend.fjall.memory-budget", "12 parsecs").contains("not a unit"));
        assert!(error("backend.fjall.memory-budget", "99999999999 tb").contains("more memory"));
        assert!(error("backend.fjall.memory-budget", "10").contains("less than the smallest"));
        assert!(error("backend.fjall.localdir", " ").contains("empty"));
        assert!(error("backend.size", "1").contains("unknown option `state.backend.size`"));
        assert_eq!(parse_memory_size("1k"), Ok(1024));
        assert_eq!(parse_memory_size("2048"), Ok(2048));
    }
}
