//! Which groups of open fixed windows stay in memory with the disk backend: those in memory
//! are a cache of the groups in use, within the processor's share of the memory budget, over
//! all its open windows. When they outgrow it, all but the most recently used move out to
//! disk (`panes_on_disk.rs`), from whichever windows they are in. A batch's groups new to a
//! window that has groups on disk are looked for there before the batch folds; one found
//! moves back in. A window that fires emits its groups in memory, then those on disk.
//!
//! As for the updating GROUP BY (`ops/updating_aggregate/residency.rs`): `GroupValues`
//! cannot forget one key, so a move out rebuilds the windows' groups that stay, keeping half
//! of what the budget holds; what a group takes is measured at each move out.

use std::cmp::Reverse;

use datafusion::arrow::array::{ArrayRef, RecordBatch, UInt32Array};
use datafusion::arrow::compute::take;
use datafusion::common::Result;
use datafusion::logical_expr::EmitTo;
use datafusion::physical_plan::aggregates::group_values::new_group_values;
use datafusion::physical_plan::aggregates::order::GroupOrdering;

use super::panes::{Pane, Window, WindowAggregation};
use super::panes_on_disk::{PanesOnDisk, Shadowed};
use crate::ops::updating_aggregate::calls::Call;
use crate::ops::updating_aggregate::on_disk::groups_within;
use crate::ops::updating_aggregate::residency::keys_of_new_groups;

impl PanesOnDisk {
    /// Notes the groups a batch's rows of `window` touch (`groups`, for rows with `keys`)
    /// and brings those new to `pane` (numbered from `before` on) back from disk, if they
    /// are there — before the rows fold.
    pub(super) fn move_in(
        &mut self,
        window: Window,
        pane: &mut Pane,
        calls: &[Call],
        keys: &[ArrayRef],
        groups: &[usize],
        before: usize,
    ) -> Result<()> {
        let total = pane.groups;
        pane.last_used.resize(total, 0);
        pane.copies.resize(total, false);
        for &group in groups {
            pane.last_used[group] = self.batch;
        }
        if !pane.on_disk || total == before {
            return Ok(());
        }
        let new_keys = keys_of_new_groups(keys, groups, before, total)?;
        let Some((found, saved)) = self.read_back(window, &new_keys)? else {
            return Ok(());
        };
        let found: Vec<usize> = found.iter().map(|&at| before + at).collect();
        for &group in &found {
            pane.copies[group] = true;
        }
        for (index, accumulators) in pane.accumulators.iter_mut().enumerate() {
            calls[index].restore_into(accumulators.as_mut(), &saved[index], &found, total)?;
        }
        Ok(())
    }

    /// The keys of `pane`'s groups that have a (stale) entry on disk; `keys` are the pane's
    /// key columns, a row per group.
    pub(super) fn shadowed_in(&self, pane: &Pane, keys: &[ArrayRef]) -> Result<Shadowed> {
        let copied: Vec<u32> = (0..pane.groups as u32)
            .filter(|&g| pane.copies.get(g as usize) == Some(&true))
            .collect();
        if copied.is_empty() {
            return Ok(Shadowed::new());
        }
        let copied = UInt32Array::from(copied);
        let keys = keys
            .iter()
            .map(|key| Ok(take(key, &copied, None)?))
            .collect::<Result<Vec<_>>>()?;
        self.shadowed(&keys)
    }
}

/// A window's groups in memory, saved: their keys and each call's accumulators.
struct SavedPane {
    window: Window,
    keys: Vec<ArrayRef>,
    calls: Vec<ArrayRef>,
}

impl WindowAggregation {
    /// Moves groups out to disk when those in memory outgrow the budget.
    pub(super) fn move_out_if_full(&mut self) -> Result<()> {
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        let resident: usize = self.panes.values().map(|pane| pane.groups).sum();
        if resident <= disk.limit {
            return Ok(());
        }
        let mut saved = Vec::with_capacity(self.panes.len());
        let mut bytes = 0u64;
        for (&(end, start), pane) in &mut self.panes {
            let Some(values) = &mut pane.keys else {
                continue;
            };
            bytes += values.size() as u64;
            let calls = pane
                .accumulators
                .iter_mut()
                .map(|accumulators| accumulators.save(pane.groups))
                .collect::<Result<Vec<_>>>()?;
            bytes += 2 * calls
                .iter()
                .map(|saved| saved.get_array_memory_size() as u64)
                .sum::<u64>();
            saved.push(SavedPane {
                window: (start, end),
                keys: Vec::new(),
                calls,
            });
        }
        disk.limit = groups_within(disk.budget, bytes, resident);
        if resident <= disk.limit {
            // The groups are smaller than was guessed: they all fit.
            return Ok(());
        }
        // Each window hands out its keys; it gets back those that stay below (a key table
        // cannot forget one key).
        for pane_saved in &mut saved {
            let (start, end) = pane_saved.window;
            if let Some(pane) = self.panes.get_mut(&(end, start))
                && let Some(values) = &mut pane.keys
            {
                pane_saved.keys = values.emit(EmitTo::All)?;
            }
        }
        // The most recently used groups of all windows stay, the rest move out.
        let mut order: Vec<(u64, u32, u32)> = Vec::with_capacity(resident);
        for (at, pane_saved) in saved.iter().enumerate() {
            let (start, end) = pane_saved.window;
            let pane = &self.panes[&(end, start)];
            for group in 0..pane.groups {
                let used = pane.last_used.get(group).copied().unwrap_or(0);
                order.push((used, at as u32, group as u32));
            }
        }
        let stay = (disk.limit / 2).min(order.len());
        if stay < order.len() {
            order.select_nth_unstable_by_key(stay, |&(used, _, _)| Reverse(used));
        }
        let mut staying = vec![Vec::new(); saved.len()];
        let mut leaving = vec![Vec::new(); saved.len()];
        for (rank, &(_, at, group)) in order.iter().enumerate() {
            let side = if rank < stay {
                &mut staying
            } else {
                &mut leaving
            };
            side[at as usize].push(group);
        }
        for ((mut pane_saved, mut stays), mut leaves) in saved.into_iter().zip(staying).zip(leaving)
        {
            let (start, end) = pane_saved.window;
            let Some(pane) = self.panes.get_mut(&(end, start)) else {
                continue;
            };
            let picked = |columns: &[ArrayRef], groups: &[u32]| -> Result<Vec<ArrayRef>> {
                let groups = UInt32Array::from(groups.to_vec());
                columns
                    .iter()
                    .map(|column| Ok(take(column, &groups, None)?))
                    .collect()
            };
            stays.sort_unstable();
            leaves.sort_unstable();
            let moving = !leaves.is_empty();
            // The window takes back the keys that stay, into a fresh table that numbers them
            // in order: all of them, as they were numbered, when none leaves.
            let keys = if moving {
                picked(&pane_saved.keys, &stays)?
            } else {
                std::mem::take(&mut pane_saved.keys)
            };
            if let Some(values) = &mut pane.keys {
                // What stays is a scattered few of the keys (the most recently used):
                // DataFusion's hash table, not the vector of small integer keys, which would
                // grow over their range only to hand them over.
                *values = new_group_values(self.key_schema.clone(), &GroupOrdering::None)?;
                values.intern(&keys, &mut Vec::with_capacity(stays.len()))?;
            }
            if !moving {
                continue;
            }
            disk.put(
                pane_saved.window,
                &picked(&pane_saved.keys, &leaves)?,
                &picked(&pane_saved.calls, &leaves)?,
            )?;
            let calls = picked(&pane_saved.calls, &stays)?;
            let stay_count = stays.len();
            let groups: Vec<usize> = (0..stay_count).collect();
            pane.accumulators = self
                .calls
                .iter()
                .map(Call::accumulators)
                .collect::<Result<_>>()?;
            for (index, accumulators) in pane.accumulators.iter_mut().enumerate() {
                self.calls[index].restore_into(
                    accumulators.as_mut(),
                    &calls[index],
                    &groups,
                    stay_count,
                )?;
            }
            let used = stays
                .iter()
                .map(|&g| pane.last_used.get(g as usize).copied().unwrap_or(0))
                .collect();
            let copies = stays
                .iter()
                .map(|&g| pane.copies.get(g as usize) == Some(&true))
                .collect();
            pane.last_used = used;
            pane.copies = copies;
            pane.groups = stay_count;
            pane.on_disk = true;
        }
        Ok(())
    }

    /// Emits the groups on disk of `window`, which fires, leaving out the `shadowed` ones
    /// (emitted from memory).
    pub(super) fn fire_on_disk(
        &self,
        window: Window,
        shadowed: &Shadowed,
        fired: &mut Vec<RecordBatch>,
    ) -> Result<()> {
        let Some(disk) = &self.disk else {
            return Ok(());
        };
        let mut accumulators = self
            .calls
            .iter()
            .map(Call::accumulators)
            .collect::<Result<Vec<_>>>()?;
        let mut numbered = Vec::new();
        disk.each_group(window, shadowed, |read| {
            let count = read.count;
            numbered.clear();
            numbered.extend(0..count);
            for (index, accumulators) in accumulators.iter_mut().enumerate() {
                self.calls[index].restore_into(
                    accumulators.as_mut(),
                    &read.saved[index],
                    &numbered,
                    count,
                )?;
            }
            fired.push(self.window_rows(window, read.keys, &mut accumulators, &numbered)?);
            for accumulators in accumulators.iter_mut() {
                accumulators.clear(&numbered);
            }
            Ok(())
        })
    }
}
