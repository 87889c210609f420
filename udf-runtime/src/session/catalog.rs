//! The session's registry of user-defined functions: what the SQL binding resolves calls
//! against and what `Session::functions` lists.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock};

use udf_core::{Capabilities, Function, FunctionKind, FunctionSpec};

/// One registered function.
#[derive(Clone)]
pub struct CatalogEntry {
    /// The SQL name (lower case: names are case-insensitive, as in Flink).
    pub name: String,
    pub spec: Arc<FunctionSpec>,
    pub function: Function,
    /// The instance's settings (`UserFunction::settings`).
    pub settings: Option<Vec<u8>>,
}

#[derive(Default)]
pub struct Catalog {
    entries: RwLock<BTreeMap<String, CatalogEntry>>,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.read().keys()).finish()
    }
}

/// SQL function names are case-insensitive.
pub fn normalize(name: &str) -> String {
    name.to_lowercase()
}

impl Catalog {
    pub fn get(&self, name: &str) -> Option<CatalogEntry> {
        self.read().get(&normalize(name)).cloned()
    }

    /// Adds `entry`; an error if its name is taken.
    pub fn insert(&self, entry: CatalogEntry) -> Result<(), String> {
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        if entries.contains_key(&entry.name) {
            return Err(format!(
                "a function named `{}` is already registered; drop it first to replace it",
                entry.name
            ));
        }
        entries.insert(entry.name.clone(), entry);
        Ok(())
    }

    pub fn remove(&self, name: &str) -> Option<CatalogEntry> {
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&normalize(name))
    }

    /// Every entry, ordered by name.
    pub fn entries(&self) -> Vec<CatalogEntry> {
        self.read().values().cloned().collect()
    }

    pub fn list(&self) -> Vec<FunctionInfo> {
        self.read().values().map(FunctionInfo::of).collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, CatalogEntry>> {
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }
}

/// What the catalog shows about a function.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionInfo {
    pub name: String,
    pub kind: FunctionKind,
    /// One line per signature: `name(arg TYPE, ...) -> TYPE`.
    pub signatures: Vec<String>,
    pub deterministic: bool,
    pub constant_folding: bool,
    pub capabilities: Capabilities,
    pub description: Option<String>,
    /// State entries of a process table function: `name Type [ROW<..>] [TTL ..]`.
    pub state: Vec<String>,
}

impl FunctionInfo {
    fn of(entry: &CatalogEntry) -> FunctionInfo {
        FunctionInfo {
            name: entry.name.clone(),
            kind: entry.spec.kind,
            signatures: entry.spec.signature_lines(&entry.name),
            deterministic: entry.spec.deterministic,
            constant_folding: entry.spec.constant_folding,
            capabilities: entry.spec.capabilities,
            description: entry.spec.description.clone(),
            state: entry.spec.state.iter().map(ToString::to_string).collect(),
        }
    }
}

impl fmt::Display for FunctionInfo {
    /// `name (kind[, flags])` and one indented line per signature.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}", self.name, self.kind)?;
        if !self.deterministic {
            f.write_str(", non-deterministic")?;
        }
        if !self.constant_folding {
            f.write_str(", no constant folding")?;
        }
        if self.capabilities.retract {
            f.write_str(", retract")?;
        }
        if self.capabilities.merge {
            f.write_str(", merge")?;
        }
        f.write_str(")")?;
        for signature in &self.signatures {
            write!(f, "\n  {signature}")?;
        }
        for state in &self.state {
            write!(f, "\n  state {state}")?;
        }
        Ok(())
    }
}
