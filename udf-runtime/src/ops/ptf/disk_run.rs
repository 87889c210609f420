//! The disk store of a PTF's run, with the disk backend (one for all its processors,
//! `streaming/state/disk/shared_run.rs`), and each processor's part of the memory budget.

use std::sync::Arc;

use datafusion::common::Result;
use udf_core::StateKind;

use super::call::PtfCall;
use crate::session::state_backend::StateBackendConfig;
use crate::streaming::state::disk::dir::StateDir;
use crate::streaming::state::disk::shared_run::SharedRun;
use crate::streaming::state::disk::store::{DiskStore, StoreMemory};
use crate::streaming::state::disk::ttl::TtlTable;

/// What one processor gets: the run's store and its part of the memory budget.
pub struct DiskShare {
    pub run: Arc<DiskStore>,
    pub processor: usize,
    /// For resident keys.
    pub budget: u64,
    /// For the cache of view items (none without views).
    pub views_budget: u64,
}

#[derive(Debug, Default)]
pub struct DiskRuns {
    current: SharedRun,
}

impl DiskRuns {
    /// Processor `processor`'s share of the current run (of `processors`), or `None` with the
    /// in-memory backend.
    pub fn share(
        &self,
        call: &PtfCall,
        config: &StateBackendConfig,
        processor: usize,
        processors: usize,
    ) -> Result<Option<DiskShare>> {
        if config.backend != crate::session::state_backend::BackendType::Fjall {
            return Ok(None);
        }
        let run = self
            .current
            .store_for(processor, processors, || open_run(call, config, processors))?;
        // The store's part of the budget is set aside (`StoreMemory::of`).
        let keyspaces = processors.max(1) * keyspaces(call);
        let for_processor = StoreMemory::of(config.memory_budget, keyspaces).left_per_processor(
            config.memory_budget,
            keyspaces,
            processors,
        );
        // The items of views in use get half, or three quarters without value entries (a
        // resident key then takes little more than its bytes).
        let views = call
            .spec
            .state
            .iter()
            .filter(|s| s.kind != StateKind::Value);
        let views_budget = match (views.count(), call.spec.state.len()) {
            (0, _) => 0,
            (views, all) if views == all => for_processor / 4 * 3,
            _ => for_processor / 2,
        };
        Ok(Some(DiskShare {
            run,
            processor,
            budget: for_processor - views_budget,
            views_budget,
        }))
    }
}

fn open_run(call: &PtfCall, config: &StateBackendConfig, processors: usize) -> Result<DiskStore> {
    let dir = StateDir::create(
        &config.root(),
        &call.name,
        call.uid.as_deref(),
        config.keep_directory,
    )?;
    let ttls = call
        .spec
        .state
        .iter()
        .map(|entry| {
            entry
                .ttl
                .map(|ttl| i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
        })
        .collect();
    DiskStore::open(
        dir,
        TtlTable::new(ttls),
        StoreMemory::of(config.memory_budget, processors.max(1) * keyspaces(call)),
    )
}

/// A processor's keyspaces: one for value entries and timers, and one for view items if the
/// function has views (`DiskStore::items`).
fn keyspaces(call: &PtfCall) -> usize {
    1 + usize::from(has_views(call))
}

/// Whether `call`'s function keeps list or map views.
pub fn has_views(call: &PtfCall) -> bool {
    call.spec.state.iter().any(|s| s.kind != StateKind::Value)
}
