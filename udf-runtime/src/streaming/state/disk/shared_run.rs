//! One store for the processors of an exec's run: made by the first processor that asks,
//! shared by the others (each in its own keyspace), closed and removed when the last one is
//! done. A processor asking for a keyspace the current run already gave out starts a new
//! run (the exec was executed again).

use std::sync::{Arc, Mutex, Weak};

use datafusion::common::Result;

use super::dir::StateDir;
use super::store::{DiskStore, StoreMemory};
use super::ttl::TtlTable;
use crate::session::state_backend::StateBackendConfig;

#[derive(Debug, Default)]
pub struct SharedRun {
    /// The current run's store and the keyspaces it gave out.
    current: Mutex<Option<(Weak<DiskStore>, Vec<bool>)>>,
}

impl SharedRun {
    /// The store of the current run for processor `processor` (of `processors`), opened by
    /// `open` when there is none or the processor already has its keyspace in it.
    pub fn store_for(
        &self,
        processor: usize,
        processors: usize,
        open: impl FnOnce() -> Result<DiskStore>,
    ) -> Result<Arc<DiskStore>> {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let reusable = current.as_mut().and_then(|(run, taken)| {
            let run = run.upgrade()?;
            let slot = taken.get_mut(processor)?;
            (!*slot).then(|| {
                *slot = true;
                run
            })
        });
        if let Some(run) = reusable {
            return Ok(run);
        }
        let run = Arc::new(open()?);
        let mut taken = vec![false; processors.max(processor + 1)];
        taken[processor] = true;
        *current = Some((Arc::downgrade(&run), taken));
        Ok(run)
    }

    /// The store of the current run of an operator without TTL that keeps groups on disk
    /// (the updating GROUP BY, window aggregates), for processor `processor` of `processors`,
    /// and that processor's share of the budget for its groups in memory. As for a PTF, the
    /// store's part of the budget is set aside (`StoreMemory::of`); the processors share the
    /// rest. The run's directory is named by the operator's `uid`.
    pub fn groups_store(
        &self,
        config: &StateBackendConfig,
        uid: &str,
        processor: usize,
        processors: usize,
    ) -> Result<(Arc<DiskStore>, u64)> {
        let memory = StoreMemory::of(config.memory_budget, processors);
        let run = self.store_for(processor, processors, || {
            let dir = StateDir::create(&config.root(), uid, None, config.keep_directory)?;
            DiskStore::open(dir, TtlTable::new(Vec::new()), memory)
        })?;
        let budget = memory.left_per_processor(config.memory_budget, processors, processors);
        Ok((run, budget))
    }
}
