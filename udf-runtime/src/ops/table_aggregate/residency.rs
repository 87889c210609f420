//! Which groups of a table aggregate's changelog stay in memory with the disk backend: those
//! in memory are a cache of the groups in use, within the processor's share of the memory
//! budget. When they outgrow it, all but the most recently used move out to disk
//! (`on_disk.rs`). A batch's groups new in memory are looked for there before it folds; a
//! group found moves back in, its accumulator and whether its rows are out as they left.
//!
//! The function's groups are numbered densely and cannot forget one, so a move out starts
//! them over with the groups that stay: it keeps half of what the budget holds, and its cost
//! is spread over the groups that came in since. What a group takes is measured at each move
//! out — its key twice (the row and the index's copy) and twice its encoded accumulator (a
//! value in memory carries spare capacity) — and sets how many groups the budget holds until
//! the next.

use std::cmp::Reverse;

use super::aggregation::{Keys, TableAggregation};
use crate::ops::updating_aggregate::on_disk::groups_within;

impl TableAggregation {
    /// Notes the groups of a batch's rows (`ids`) as used, and brings those new in memory
    /// (numbered from `before` on) back from disk, if they are there — before the rows fold.
    pub(super) fn move_in(&mut self, ids: &[usize], before: usize) -> Result<(), String> {
        let total = self.keys.count();
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        disk.batch += 1;
        disk.last_used.resize(total, 0);
        for &group in ids {
            disk.last_used[group] = disk.batch;
        }
        if total == before || disk.entries == 0 {
            return Ok(());
        }
        self.emitted.resize(total, false);
        let keys = &self.keys;
        let mut new: Vec<usize> = (before..total).collect();
        new.sort_unstable_by(|&a, &b| keys.key_bytes(a).cmp(keys.key_bytes(b)));
        let wanted: Vec<&[u8]> = new.iter().map(|&group| keys.key_bytes(group)).collect();
        let (groups, emitted, name) = (&mut self.groups, &mut self.emitted, &self.name);
        disk.read_back(&wanted, |at, entry| {
            let group = new[at];
            let Some((&out, state)) = entry.split_first() else {
                return datafusion::common::internal_err!(
                    "a group of `{name}` on disk has an empty entry"
                );
            };
            groups.restore_state(group, state).map_err(|e| {
                datafusion::common::DataFusionError::Execution(format!(
                    "the accumulator of `{name}` read back from disk: {e}"
                ))
            })?;
            emitted[group] = out == 1;
            Ok(())
        })
        .map_err(|e| e.to_string())
    }

    /// Moves groups out to disk when those in memory outgrow the budget. Called between
    /// batches, when no emitted row waits (rows name their groups by number).
    pub(super) fn move_out_if_full(&mut self) -> Result<(), String> {
        let resident = self.keys.count();
        if self.disk.as_ref().is_none_or(|disk| resident <= disk.limit) {
            return Ok(());
        }
        self.emitted.resize(resident, false);
        let entries = (0..resident)
            .map(|group| self.entry(group))
            .collect::<Result<Vec<_>, _>>()?;
        let key_bytes: usize = (0..resident).map(|g| self.keys.key_bytes(g).len()).sum();
        let state_bytes: usize = entries.iter().map(Vec::len).sum();
        let bytes = (self.groups.size() + 2 * key_bytes + 2 * state_bytes) as u64;
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        disk.limit = groups_within(disk.budget, bytes, resident);
        if resident <= disk.limit {
            // The groups are smaller than was guessed: they all fit.
            return Ok(());
        }
        // The most recently used groups stay, the rest move out; those that stay keep their
        // order.
        let mut order: Vec<usize> = (0..resident).collect();
        let stay = (disk.limit / 2).min(resident);
        let mut last_used = std::mem::take(&mut disk.last_used);
        last_used.resize(resident, 0);
        if stay < resident {
            order.select_nth_unstable_by_key(stay, |&group| Reverse(last_used[group]));
        }
        let (staying, leaving) = order.split_at_mut(stay);
        staying.sort_unstable();
        disk.put(
            leaving
                .iter()
                .map(|&group| (self.keys.key_bytes(group), &entries[group][..]))
                .collect(),
        )
        .map_err(|e| e.to_string())?;

        // Start over with the groups that stay (numbered in their order).
        let mut groups = self
            .function
            .clone()
            .create_groups(self.signature, self.row_type.clone())
            .map_err(|e| e.to_string())?;
        let mut keys = Keys::new(&self.key_types)?;
        let mut emitted = Vec::with_capacity(staying.len());
        let mut used = Vec::with_capacity(staying.len());
        for &old in staying.iter() {
            let group = keys.group_of_bytes(self.keys.key_bytes(old));
            groups
                .restore_state(group, &entries[old][1..])
                .map_err(|e| format!("the accumulator of `{}`: {e}", self.name))?;
            emitted.push(self.emitted[old]);
            used.push(last_used[old]);
        }
        self.groups = groups;
        self.keys = keys;
        self.emitted = emitted;
        if let Some(disk) = &mut self.disk {
            disk.last_used = used;
        }
        Ok(())
    }

    /// A group's entry, as the store and checkpoints keep it: whether its `emit_value` rows
    /// are out, then its encoded accumulator.
    pub(super) fn entry(&mut self, group: usize) -> Result<Vec<u8>, String> {
        let state = self.guard_group("encoding an accumulator", group, |groups| {
            groups.state(group)
        })?;
        let mut entry = Vec::with_capacity(1 + state.len());
        entry.push(u8::from(self.emitted.get(group).copied().unwrap_or(false)));
        entry.extend_from_slice(&state);
        Ok(entry)
    }
}
