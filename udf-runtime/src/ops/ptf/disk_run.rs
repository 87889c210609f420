//! The disk store of an exec's run, with the disk backend: made by the first processor that
//! asks, shared by the others (each in its own keyspace), closed and removed when the last
//! one is done. A processor asking for a keyspace the current run already gave out starts a
//! new run, as the router does.

use std::sync::{Arc, Mutex, Weak};

use datafusion::common::Result;
use udf_core::StateKind;

use super::call::PtfCall;
use crate::session::state_backend::StateBackendConfig;
use crate::streaming::state::disk::dir::StateDir;
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
    /// The current run's store and the keyspaces it gave out.
    current: Mutex<Option<(Weak<DiskStore>, Vec<bool>)>>,
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
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let reusable = current.as_mut().and_then(|(run, taken)| {
            let run = run.upgrade()?;
            let slot = taken.get_mut(processor)?;
            (!*slot).then(|| {
                *slot = true;
                run
            })
        });
        let run = match reusable {
            Some(run) => run,
            None => {
                let run = Arc::new(open_run(call, config, processors)?);
                let mut taken = vec![false; processors.max(processor + 1)];
                taken[processor] = true;
                *current = Some((Arc::downgrade(&run), taken));
                run
            }
        };
        // The store's part of the budget is set aside (see `store_memory`).
        let store = store_memory(config, processors, keyspaces(call));
        let memtables = 2 * store.memtable * (processors.max(1) * keyspaces(call)) as u64;
        let for_processor =
            config.memory_budget.saturating_sub(store.cache + memtables) / processors.max(1) as u64;
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
        store_memory(config, processors, keyspaces(call)),
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

/// The store's part of the budget: a quarter for fjall's block cache, an eighth for writes
/// waiting to be flushed (each keyspace's memtable and one being flushed); resident keys and
/// the view items in use have the rest.
fn store_memory(config: &StateBackendConfig, processors: usize, keyspaces: usize) -> StoreMemory {
    let memtables = (processors.max(1) * keyspaces) as u64;
    StoreMemory {
        cache: config.memory_budget / 4,
        memtable: (config.memory_budget / 16 / memtables).max(64 << 10),
    }
}
