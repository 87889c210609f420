//! Which groups of an updating GROUP BY stay in memory with the disk backend: those in
//! memory are a cache of the groups in use, within the processor's share of the memory
//! budget. When they outgrow it, all but the most recently used move out to disk
//! (`on_disk.rs`). A batch's new groups are looked for there before it folds; a group found
//! moves back in.
//!
//! DataFusion's `GroupValues` cannot forget one key, so a move out rebuilds the groups that
//! stay: it keeps half of what the budget holds, and its cost is spread over the groups that
//! came in since. What a group takes in memory is measured at each move out — the key table's
//! size and twice the saved accumulators (maps and vectors in memory carry spare capacity) —
//! and sets how many groups the budget holds until the next.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{take, take_record_batch};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::common::{Result, exec_err};

use super::aggregation::UpdatingAggregation;
use super::calls::{Call, key_ids};
use super::on_disk::groups_within;

/// The keys of groups `from..to`, new to a key table: a row each, taken from the first row of
/// the batch (whose rows' groups are `groups`, and `keys` their key columns) in each.
pub(crate) fn keys_of_new_groups(
    keys: &[ArrayRef],
    groups: &[usize],
    from: usize,
    to: usize,
) -> Result<Vec<ArrayRef>> {
    let mut first_row = vec![u32::MAX; to - from];
    for (row, &group) in groups.iter().enumerate() {
        if group >= from && first_row[group - from] == u32::MAX {
            first_row[group - from] = row as u32;
        }
    }
    let rows = UInt32Array::from(first_row);
    keys.iter().map(|key| Ok(take(key, &rows, None)?)).collect()
}

impl UpdatingAggregation {
    /// Brings the groups of a batch that are new in memory (numbered from `resident_before`
    /// on) back from disk, if they are there; `keys` and `groups` are the batch's.
    pub(super) fn move_in(
        &mut self,
        keys: &[ArrayRef],
        groups: &[usize],
        resident_before: usize,
    ) -> Result<()> {
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        let total_groups = self.counts.len();
        disk.touch(groups, total_groups);
        if disk.entries > 0 && total_groups > resident_before {
            let new_keys = keys_of_new_groups(keys, groups, resident_before, total_groups)?;
            if let Some((found, saved)) = disk.read_back(&new_keys)? {
                let found: Vec<usize> = found.iter().map(|&at| resident_before + at).collect();
                for &group in &found {
                    disk.copies[group] = true;
                }
                let Some(counts) = saved[0].as_primitive_opt::<Int64Type>() else {
                    return exec_err!("row counts on disk read as {}", saved[0].data_type());
                };
                for (&group, &count) in found.iter().zip(counts.values()) {
                    self.counts[group] = count;
                }
                for (index, accumulators) in self.accumulators.iter_mut().enumerate() {
                    self.calls[index].restore_into(
                        accumulators.as_mut(),
                        &saved[1 + index],
                        &found,
                        total_groups,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Moves groups out to disk when those in memory outgrow the budget.
    pub(super) fn move_out_if_full(&mut self) -> Result<()> {
        let resident = self.counts.len();
        if self.disk.as_ref().is_none_or(|disk| resident <= disk.limit) {
            return Ok(());
        }
        let (live, gone) = self.live_and_gone();
        let (saved, gone_keys) = self.saved_and_gone(&live, &gone)?;
        let key_table = self.group_values.as_ref().map_or(0, |v| v.size());
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        let bytes = key_table as u64 + 2 * saved.get_array_memory_size() as u64;
        disk.limit = groups_within(disk.budget, bytes, resident);
        if resident <= disk.limit {
            // The groups are smaller than was guessed: they all fit.
            return Ok(());
        }
        // The most recently used live groups stay, the rest move out; both keep their order.
        let mut order: Vec<u32> = (0..live.len() as u32).collect();
        let stay = (disk.limit / 2).min(order.len());
        let last_used = &disk.last_used;
        let recency = |&at: &u32| std::cmp::Reverse(last_used[live[at as usize] as usize]);
        if stay < order.len() {
            order.select_nth_unstable_by_key(stay, recency);
        }
        let (staying, leaving) = order.split_at_mut(stay);
        staying.sort_unstable();
        leaving.sort_unstable();
        let staying_used: Vec<u64> = staying
            .iter()
            .map(|&at| last_used[live[at as usize] as usize])
            .collect();
        let staying_copies: Vec<bool> = staying
            .iter()
            .map(|&at| disk.copies[live[at as usize] as usize])
            .collect();
        disk.put(
            &take_record_batch(&saved, &UInt32Array::from(leaving.to_vec()))?,
            &gone_keys,
            self.keys.len(),
        )?;
        disk.metrics.moved_out.add(leaving.len());
        let staying = take_record_batch(&saved, &UInt32Array::from(staying.to_vec()))?;
        drop(saved);

        // Start over with the groups that stay (fresh keys are numbered in order).
        self.group_values = key_ids(&self.keys, &self.input)?;
        self.accumulators = self
            .calls
            .iter()
            .map(Call::accumulators)
            .collect::<Result<_>>()?;
        self.counts = Vec::new();
        self.restore_batch(staying, None)?;
        if let Some(disk) = &mut self.disk {
            disk.last_used = staying_used;
            disk.copies = staying_copies;
        }
        Ok(())
    }

    /// Brings the store's entries of the groups in memory up to date: those of live groups
    /// are written, those of groups that emptied removed. A checkpoint then saves the
    /// store's entries and the live groups in memory without one.
    pub(super) fn write_back_copies(&mut self) -> Result<()> {
        if self.disk.is_none() {
            return Ok(());
        }
        let (live, gone) = self.live_and_gone();
        let copies = self.disk.as_ref().map_or(&[][..], |disk| &disk.copies[..]);
        let live: Vec<u32> = live.into_iter().filter(|&g| copies[g as usize]).collect();
        if live.is_empty() && gone.is_empty() {
            return Ok(());
        }
        let (saved, gone_keys) = self.saved_and_gone(&live, &gone)?;
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        disk.put(&saved, &gone_keys, self.keys.len())?;
        for &group in &gone {
            disk.copies[group as usize] = false;
        }
        Ok(())
    }

    /// The live groups in memory, and those that emptied but have an entry in the store.
    fn live_and_gone(&mut self) -> (Vec<u32>, Vec<u32>) {
        let resident = self.counts.len();
        let copies = match &mut self.disk {
            Some(disk) => {
                disk.copies.resize(resident, false);
                &disk.copies[..]
            }
            None => &[],
        };
        (0..resident as u32)
            .filter(|&g| self.counts[g as usize] > 0 || copies.get(g as usize) == Some(&true))
            .partition(|&g| self.counts[g as usize] > 0)
    }

    /// The saved batch of the `live` groups and the keys of the `gone` ones, with one save
    /// of the accumulators.
    fn saved_and_gone(
        &mut self,
        live: &[u32],
        gone: &[u32],
    ) -> Result<(RecordBatch, Vec<ArrayRef>)> {
        let listed = UInt32Array::from_iter_values(live.iter().chain(gone).copied());
        let both = self.saved(&listed)?;
        let saved = both.slice(0, live.len());
        let gone_keys = both.columns()[..self.keys.len()]
            .iter()
            .map(|key| key.slice(live.len(), gone.len()))
            .collect();
        Ok((saved, gone_keys))
    }
}
