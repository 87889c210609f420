//! Session configuration owned by the framework, carried in DataFusion's config so it
//! travels with every query (and `SET job.<name> = '<value>'` works in SQL).

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::config::ConfigOptions;
use datafusion::error::Result;

/// Global job parameters, read by functions in `open` through
/// `FunctionContext::get_job_parameter` (Flink's `pipeline.global-job-parameters`).
#[derive(Clone, Debug, Default)]
pub struct JobParameters {
    values: Arc<BTreeMap<String, String>>,
}

impl JobParameters {
    pub fn values(&self) -> Arc<BTreeMap<String, String>> {
        self.values.clone()
    }

    pub fn insert(&mut self, key: &str, value: &str) {
        Arc::make_mut(&mut self.values).insert(key.to_owned(), value.to_owned());
    }

    /// The parameters in `options` (empty if the extension is absent).
    pub fn of(options: &ConfigOptions) -> Arc<BTreeMap<String, String>> {
        options
            .extensions
            .get::<JobParameters>()
            .map(JobParameters::values)
            .unwrap_or_default()
    }
}

impl ConfigExtension for JobParameters {
    const PREFIX: &'static str = "job";
}

impl ExtensionOptions for JobParameters {
    extension_options_basics!();

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        self.insert(key, value);
        Ok(())
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        self.values
            .iter()
            .map(|(key, value)| ConfigEntry {
                key: format!("{}.{key}", Self::PREFIX),
                value: Some(value.clone()),
                description: "job parameter",
            })
            .collect()
    }
}
