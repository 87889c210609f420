//! Which keys of a row-time OVER window stay in memory with the disk backend: those in memory
//! are a cache of the keys in use, within the processor's share of the memory budget. When
//! they outgrow it, all but the most recently used move out to disk (`on_disk.rs`) with their
//! accumulators, the time they last emitted and the rows in their frames; a key with rows
//! waiting for the watermark stays (its rows are released with its accumulators). A batch's
//! keys new in memory are looked for on disk before its rows are kept; one found comes back.
//!
//! As for the updating GROUP BY, the key table cannot forget one key, so a move out numbers
//! the keys that stay anew, keeping half of what the budget holds. What a key takes is
//! measured at each move out — the key table, twice the saved accumulators and the input
//! batches still referred to — and sets how many keys the budget holds until the next.

use std::cmp::Reverse;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{cast, interleave, take};
use datafusion::common::{Result, internal_err};

use super::frames::{OverProcessor, RowRef};
use super::on_disk::{KeysOnDisk, entry, read_entry};
use crate::ops::updating_aggregate::calls::{Call, key_ids};
use crate::ops::updating_aggregate::key_columns;
use crate::ops::updating_aggregate::on_disk::{groups_within, saved_rows};
use crate::ops::updating_aggregate::residency::keys_of_new_groups;

/// The keys on disk as a checkpoint saves them: the key columns, each key's `last` and each
/// call's saved accumulators; the rows of their frames — input columns, the key (numbered
/// after those in memory) and time.
pub(super) struct SavedOnDisk {
    pub keys: Vec<ArrayRef>,
    pub last: ArrayRef,
    pub calls: Vec<ArrayRef>,
    pub rows: Vec<ArrayRef>,
    pub row_keys: Vec<u32>,
    pub row_times: Vec<i64>,
}

impl OverProcessor {
    /// Keeps the keys beyond the memory budget on disk.
    pub(super) fn with_disk(mut self, disk: KeysOnDisk) -> Self {
        self.disk = Some(disk);
        self
    }

    /// Notes the keys of a batch's rows (`key_ids`, their columns `columns`) as used, and
    /// brings those new in memory (numbered from `before` on) back from disk.
    pub(super) fn move_in(
        &mut self,
        columns: &[ArrayRef],
        key_ids: &[usize],
        before: usize,
    ) -> Result<()> {
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        let total = self.last.len();
        disk.batch += 1;
        disk.last_used.resize(total, 0);
        for &key in key_ids {
            disk.last_used[key] = disk.batch;
        }
        if total == before {
            return Ok(());
        }
        let new_keys = keys_of_new_groups(columns, key_ids, before, total)?;
        let rows = disk.keys.convert_columns(&new_keys)?;
        let (mut found, mut lasts, mut accumulators) = (Vec::new(), Vec::new(), Vec::new());
        let mut frames: Vec<(usize, i64, Vec<u8>)> = Vec::new();
        disk.take_back(&rows, |at, bytes| {
            let read = read_entry(bytes)?;
            let key = before + at;
            found.push(key);
            lasts.push(read.last);
            accumulators.push(read.accumulators.to_vec());
            frames.extend(
                read.frame
                    .iter()
                    .map(|&(time, row)| (key, time, row.to_vec())),
            );
            Ok(())
        })?;
        if found.is_empty() {
            return Ok(());
        }
        let values = disk.values()?;
        let parser = values.parser();
        let saved = values.convert_rows(accumulators.iter().map(|a| parser.parse(a)))?;
        for (index, accumulators) in self.accumulators.iter_mut().enumerate() {
            self.calls[index].restore_into(accumulators.as_mut(), &saved[index], &found, total)?;
        }
        for (&key, last) in found.iter().zip(lasts) {
            self.last[key] = last;
        }
        if frames.is_empty() {
            return Ok(());
        }
        let parser = disk.rows.parser();
        let columns = disk
            .rows
            .convert_rows(frames.iter().map(|(_, _, row)| parser.parse(row)))?;
        let batch = RecordBatch::try_new(self.input_schema.clone(), self.as_input(columns)?)?;
        let number = self.keep_batch(batch, frames.len())?;
        for (at, &(key, time, _)) in frames.iter().enumerate() {
            self.retained[key].push_back((time, (number, at as u32)));
        }
        Ok(())
    }

    /// Moves the least recently used keys out to disk when those in memory outgrow the
    /// budget.
    pub(super) fn move_out_if_full(&mut self) -> Result<()> {
        let resident = self.last.len();
        if self.disk.as_ref().is_none_or(|disk| resident <= disk.limit) {
            return Ok(());
        }
        let Some(ids) = &mut self.key_ids else {
            return Ok(());
        };
        let saved = self
            .accumulators
            .iter_mut()
            .map(|accumulators| accumulators.save(resident))
            .collect::<Result<Vec<_>>>()?;
        let stored: usize = self
            .stored
            .values()
            .map(|stored| stored.batch.get_array_memory_size())
            .sum();
        let saved_bytes: usize = saved.iter().map(|s| s.get_array_memory_size()).sum();
        let bytes = (ids.size() + 2 * saved_bytes + stored) as u64;
        let Some(disk) = &mut self.disk else {
            return Ok(());
        };
        disk.limit = groups_within(disk.budget, bytes, resident);
        if resident <= disk.limit {
            // The keys are smaller than was guessed: they all fit.
            return Ok(());
        }
        // Keys with rows waiting stay; of the others the most recently used, up to half
        // what the budget holds.
        let mut waiting = vec![false; resident];
        for &(_, key) in self.pending.keys() {
            waiting[key] = true;
        }
        let waiting_count = waiting.iter().filter(|&&w| w).count();
        disk.last_used.resize(resident, 0);
        let mut idle: Vec<usize> = (0..resident).filter(|&key| !waiting[key]).collect();
        let stay = (disk.limit / 2)
            .saturating_sub(waiting_count)
            .min(idle.len());
        if stay < idle.len() {
            let last_used = &disk.last_used;
            idle.select_nth_unstable_by_key(stay, |&key| Reverse(last_used[key]));
        }
        let mut leaving = idle.split_off(stay);
        if leaving.is_empty() {
            return Ok(());
        }
        leaving.sort_unstable();
        let mut staying: Vec<usize> = idle;
        staying.extend((0..resident).filter(|&key| waiting[key]));
        staying.sort_unstable();

        // The entries of the keys that leave.
        let all_keys = key_columns(ids)?;
        let pick = |columns: &[ArrayRef], keys: &[usize]| -> Result<Vec<ArrayRef>> {
            let keys = UInt32Array::from_iter_values(keys.iter().map(|&k| k as u32));
            columns
                .iter()
                .map(|column| Ok(take(column, &keys, None)?))
                .collect()
        };
        let key_rows = disk.keys.convert_columns(&pick(&all_keys, &leaving)?)?;
        let values = saved_rows(&mut disk.values, &saved)?;
        let accumulator_rows = values.convert_columns(&pick(&saved, &leaving)?)?;
        let mut frame_refs: Vec<RowRef> = Vec::new();
        let mut frame_ends = Vec::with_capacity(leaving.len());
        for &key in &leaving {
            frame_refs.extend(self.retained[key].iter().map(|&(_, row)| row));
            frame_ends.push(frame_refs.len());
        }
        let frame_rows = if frame_refs.is_empty() {
            None
        } else {
            let (sources, picks) = Self::sources(&frame_refs);
            let columns = (0..self.input_schema.fields().len())
                .map(|column| {
                    let arrays: Vec<&dyn Array> = sources
                        .iter()
                        .map(|number| self.stored[number].batch.column(column).as_ref())
                        .collect();
                    Ok(interleave(&arrays, &picks)?)
                })
                .collect::<Result<Vec<_>>>()?;
            Some(disk.rows.convert_columns(&columns)?)
        };
        let mut entries = Vec::with_capacity(leaving.len());
        let mut from = 0;
        for (at, &key) in leaving.iter().enumerate() {
            let frame: Vec<(i64, &[u8])> = self.retained[key]
                .iter()
                .enumerate()
                .map(|(i, &(time, _))| {
                    let row = frame_rows
                        .as_ref()
                        .map_or(&[][..], |rows| rows.row(from + i).data());
                    (time, row)
                })
                .collect();
            from = frame_ends[at];
            entries.push((
                key_rows.row(at).data(),
                entry(self.last[key], accumulator_rows.row(at).data(), &frame),
            ));
        }
        disk.put(entries)?;
        let used: Vec<u64> = staying.iter().map(|&key| disk.last_used[key]).collect();
        disk.last_used = used;
        self.release_refs(&frame_refs);

        // Start over with the keys that stay, numbered in their order.
        let mut fresh = match key_ids(&self.keys, &self.input_schema)? {
            Some(fresh) => fresh,
            None => return internal_err!("an OVER window without keys moved keys out"),
        };
        let mut numbered = Vec::with_capacity(staying.len());
        fresh.intern(&pick(&all_keys, &staying)?, &mut numbered)?;
        if numbered.iter().enumerate().any(|(at, &id)| at != id) {
            return internal_err!("the OVER window's keys were numbered out of order");
        }
        self.key_ids = Some(fresh);
        let mut renumbered = vec![usize::MAX; resident];
        for (new, &old) in staying.iter().enumerate() {
            renumbered[old] = new;
        }
        self.last = staying.iter().map(|&key| self.last[key]).collect();
        let mut retained: Vec<VecDeque<(i64, RowRef)>> = Vec::with_capacity(staying.len());
        for &key in &staying {
            retained.push(std::mem::take(&mut self.retained[key]));
        }
        self.retained = retained;
        self.pending = std::mem::take(&mut self.pending)
            .into_iter()
            .map(|((time, key), rows)| ((time, renumbered[key]), rows))
            .collect::<BTreeMap<_, _>>();
        let kept = pick(&saved, &staying)?;
        let groups: Vec<usize> = (0..staying.len()).collect();
        self.accumulators = self
            .calls
            .iter()
            .map(Call::accumulators)
            .collect::<Result<_>>()?;
        for (index, accumulators) in self.accumulators.iter_mut().enumerate() {
            self.calls[index].restore_into(
                accumulators.as_mut(),
                &kept[index],
                &groups,
                staying.len(),
            )?;
        }
        Ok(())
    }

    /// The keys on disk as a checkpoint saves them, numbered from `first` on; `None` when
    /// there are none.
    pub(super) fn saved_on_disk(&self, first: u32) -> Result<Option<SavedOnDisk>> {
        let Some(disk) = &self.disk else {
            return Ok(None);
        };
        let entries = disk.entries()?;
        if entries.is_empty() {
            return Ok(None);
        }
        let reads = entries
            .iter()
            .map(|(_, value)| read_entry(value))
            .collect::<Result<Vec<_>>>()?;
        let key_parser = disk.keys.parser();
        let keys = disk
            .keys
            .convert_rows(entries.iter().map(|(key, _)| key_parser.parse(key)))?;
        let values = disk.values()?;
        let value_parser = values.parser();
        let calls =
            values.convert_rows(reads.iter().map(|r| value_parser.parse(r.accumulators)))?;
        let last: ArrayRef = Arc::new(Int64Array::from_iter(reads.iter().map(|r| r.last)));
        let (mut row_keys, mut row_times, mut frame) = (Vec::new(), Vec::new(), Vec::new());
        for (at, read) in reads.iter().enumerate() {
            for &(time, row) in &read.frame {
                row_keys.push(first + at as u32);
                row_times.push(time);
                frame.push(row);
            }
        }
        let row_parser = disk.rows.parser();
        let rows = if frame.is_empty() {
            self.input_schema
                .fields()
                .iter()
                .map(|f| datafusion::arrow::array::new_empty_array(f.data_type()))
                .collect()
        } else {
            self.as_input(
                disk.rows
                    .convert_rows(frame.iter().map(|row| row_parser.parse(row)))?,
            )?
        };
        Ok(Some(SavedOnDisk {
            keys,
            last,
            calls,
            rows,
            row_keys,
            row_times,
        }))
    }

    /// Input columns read back from the row format, of the input's types (the row format
    /// gives a dictionary's values back as plain values).
    fn as_input(&self, columns: Vec<ArrayRef>) -> Result<Vec<ArrayRef>> {
        columns
            .into_iter()
            .zip(self.input_schema.fields())
            .map(|(column, field)| {
                if column.data_type() == field.data_type() {
                    Ok(column)
                } else {
                    Ok(cast(&column, field.data_type())?)
                }
            })
            .collect()
    }
}
