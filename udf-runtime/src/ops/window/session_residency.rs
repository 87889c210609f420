//! Which keys' open sessions stay in memory with the disk backend: those in memory are a
//! cache of the keys in use, within the processor's share of the memory budget. When their
//! sessions outgrow it, the sessions of all but the most recently used keys move out to disk
//! (`sessions_on_disk.rs`) — a key's sessions together, since a row may merge any of them —
//! and the keys are forgotten. A batch's keys new to memory are looked for there before its
//! rows are assigned: a key found comes back with its open sessions. The watermark closes
//! sessions on disk as it closes those in memory, from the store.
//!
//! What a session takes is measured at each move out — its key, twice its saved
//! accumulators (maps and vectors in memory carry spare capacity) and the index entries — and
//! sets how many sessions the budget holds until the next. A move out keeps half of that.

use std::cmp::Reverse;

use datafusion::arrow::array::{RecordBatch, UInt32Array};
use datafusion::arrow::compute::take;
use datafusion::common::Result;

use super::sessions::{Session, SessionAggregation};
use super::sessions_on_disk::{Leaving, SessionsOnDisk, SessionsRead};
use super::snapshot::OpenWindows;
use crate::ops::updating_aggregate::calls::Call;
use crate::ops::updating_aggregate::on_disk::groups_within;

/// Bytes of a session in memory besides its key and accumulators: the session itself and
/// its entry in the index by end.
const SESSION_BYTES: u64 = 64;

impl SessionAggregation {
    /// Keeps the sessions of keys beyond the memory budget on disk.
    pub(super) fn with_disk(mut self, disk: SessionsOnDisk) -> Self {
        self.disk = Some(disk);
        self
    }

    /// Notes the keys of a batch's rows (`key_ids`) as used, and brings the open sessions of
    /// those new in memory (numbered from `before` on) back from disk — before the rows are
    /// assigned to sessions.
    pub(super) fn move_in(&mut self, key_ids: &[usize], before: usize) -> Result<()> {
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        let total = self.key_values.len();
        disk.batch += 1;
        self.last_used.resize(total, 0);
        for &key in key_ids {
            self.last_used[key] = disk.batch;
        }
        if total == before {
            return Ok(());
        }
        let mut new: Vec<usize> = (before..total).collect();
        new.sort_unstable_by(|&a, &b| self.key_values[a].cmp(&self.key_values[b]));
        let keys: Vec<&[u8]> = new
            .iter()
            .map(|&key| self.key_values[key].row().data())
            .collect();
        let Some(read) = disk.take_back(&keys, self.clock.watermark())? else {
            return Ok(());
        };
        let mut slots = Vec::with_capacity(read.rows());
        for row in 0..read.rows() {
            let key = new[read.owners[row]];
            let session = Session {
                start: read.starts[row],
                end: read.ends[row],
                slot: self.take_slot(),
            };
            self.sessions[key].push(session);
            self.by_end.insert((session.end, key, session.start));
            slots.push(session.slot);
        }
        for (index, accumulators) in self.accumulators.iter_mut().enumerate() {
            self.calls[index].restore_into(
                accumulators.as_mut(),
                &read.saved[index],
                &slots,
                self.slots,
            )?;
        }
        Ok(())
    }

    /// Moves the sessions of the least recently used keys out to disk when the open
    /// sessions in memory outgrow the budget.
    pub(super) fn move_out_if_full(&mut self) -> Result<()> {
        let resident = self.by_end.len();
        if self.disk.as_ref().is_none_or(|disk| resident <= disk.limit) {
            return Ok(());
        }
        let saved = self
            .accumulators
            .iter_mut()
            .map(|accumulators| accumulators.save(self.slots))
            .collect::<Result<Vec<_>>>()?;
        let per_slot: u64 = saved
            .iter()
            .map(|saved| saved.get_array_memory_size() as u64)
            .sum::<u64>()
            / self.slots.max(1) as u64;
        let keys: Vec<usize> = (0..self.sessions.len())
            .filter(|&key| !self.sessions[key].is_empty())
            .collect();
        let key_bytes: u64 = keys
            .iter()
            .map(|&key| self.key_values[key].as_ref().len() as u64)
            .sum();
        let bytes = key_bytes + resident as u64 * (2 * per_slot + SESSION_BYTES);
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        disk.limit = groups_within(disk.budget, bytes, resident);
        if resident <= disk.limit {
            // The sessions are smaller than was guessed: they all fit.
            return Ok(());
        }
        // The most recently used keys stay while their sessions fit in half the limit.
        self.last_used.resize(self.key_values.len(), 0);
        let mut by_recency = keys;
        by_recency.sort_unstable_by_key(|&key| Reverse(self.last_used[key]));
        let (mut kept, mut cut) = (0, by_recency.len());
        for (at, &key) in by_recency.iter().enumerate() {
            kept += self.sessions[key].len();
            if kept > disk.limit / 2 {
                cut = at;
                break;
            }
        }
        let mut leaving_keys = by_recency.split_off(cut);
        leaving_keys.sort_unstable();
        let mut leaving = Vec::new();
        let mut slots = Vec::new();
        for &key in &leaving_keys {
            for session in &self.sessions[key] {
                leaving.push(Leaving {
                    key: self.key_values[key].row().data(),
                    start: session.start,
                    end: session.end,
                });
                slots.push(session.slot);
            }
        }
        let picked = UInt32Array::from_iter_values(slots.iter().map(|&slot| slot as u32));
        let leaving_saved = saved
            .iter()
            .map(|saved| Ok(take(saved, &picked, None)?))
            .collect::<Result<Vec<_>>>()?;
        disk.put(&leaving, &leaving_saved)?;
        drop(leaving);
        for &key in &leaving_keys {
            for session in std::mem::take(&mut self.sessions[key]) {
                self.by_end.remove(&(session.end, key, session.start));
            }
        }
        for accumulators in &mut self.accumulators {
            accumulators.clear(&slots);
        }
        self.free.extend(&slots);
        // The keys that left have no session in memory now: forget them.
        self.forget_idle_keys()
    }

    /// Closes the sessions on disk whose end − 1 `watermark` has reached: their rows.
    pub(super) fn close_on_disk(
        &mut self,
        watermark: i64,
        closed: &mut Vec<RecordBatch>,
    ) -> Result<()> {
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        // Made when sessions on disk close: most closes find none there.
        let mut spare: Option<Vec<_>> = None;
        let (calls, schema, layout) = (&self.calls, &self.schema, &self.layout);
        let mut numbered = Vec::new();
        disk.close(watermark, |read: SessionsRead| {
            let spare = match &mut spare {
                Some(spare) => spare,
                None => spare.insert(
                    calls
                        .iter()
                        .map(Call::accumulators)
                        .collect::<Result<_>>()?,
                ),
            };
            let count = read.rows();
            numbered.clear();
            numbered.extend(0..count);
            let mut values = Vec::with_capacity(calls.len());
            for (index, accumulators) in spare.iter_mut().enumerate() {
                calls[index].restore_into(
                    accumulators.as_mut(),
                    &read.saved[index],
                    &numbered,
                    count,
                )?;
                values.push(accumulators.evaluate(&numbered)?);
                accumulators.clear(&numbered);
            }
            closed.push(super::sessions::session_rows(
                schema,
                layout,
                &read.starts,
                &read.ends,
                read.keys,
                values,
            )?);
            Ok(())
        })
    }

    /// The open sessions on disk, as a checkpoint saves them, a chunk at a time.
    pub(super) fn open_on_disk(&self, open: &mut Vec<OpenWindows>) -> Result<()> {
        let Some(disk) = &self.disk else {
            return Ok(());
        };
        disk.each_open(|read| {
            open.push(OpenWindows {
                starts: read.starts,
                ends: read.ends,
                keys: read.keys,
                calls: read.saved,
            });
            Ok(())
        })
    }
}
