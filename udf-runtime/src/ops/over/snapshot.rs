//! Checkpoints of a row-time OVER window's processor: the watermark of each input
//! partition; per key its values, the time it last emitted and its accumulators; and the
//! rows kept — waiting for the watermark, or in a key's frame (to be taken out of it later)
//! — as input rows with their key, time and which of the two. Two Arrow IPC streams in one
//! postcard record. A restored processor keeps the keys routed to it and their rows, in the
//! order they were kept. With the disk backend the keys on disk and their frames are saved
//! after those in memory, and a restore beyond the memory budget moves keys out again.

use std::collections::VecDeque;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int64Array, RecordBatch, UInt32Array,
};
use datafusion::arrow::compute::{concat, filter_record_batch, interleave, take};
use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema, UInt32Type};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::common::{Result, exec_datafusion_err, exec_err};
use serde::{Deserialize, Serialize};

use super::frames::{OverProcessor, RowRef};
use crate::ops::updating_aggregate::key_columns;
use crate::streaming::state::KeepKeys;
use crate::streaming::watermarks::SourceWatermarks;

/// Changes whenever the layout changes.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Saved {
    format: u32,
    watermarks: SourceWatermarks,
    /// One row per key: key columns, `last` (NULL: never emitted), each call's accumulators.
    keys: Vec<u8>,
    /// One row per kept row: the input columns, then `key` (its row in `keys`), `time` and
    /// `waiting`.
    rows: Vec<u8>,
}

impl OverProcessor {
    /// The processor's state, for a checkpoint.
    pub(super) fn save(&mut self) -> Result<Vec<u8>> {
        let total = self.last.len();
        let on_disk = self.saved_on_disk(total as u32)?;
        let mut columns = match &mut self.key_ids {
            Some(ids) => key_columns(ids)?,
            None => Vec::new(),
        };
        let mut last: ArrayRef = Arc::new(Int64Array::from(self.last.clone()));
        if let Some(disk) = &on_disk {
            // The keys on disk follow those in memory.
            for (column, on_disk) in columns.iter_mut().zip(&disk.keys) {
                *column = concat(&[column.as_ref(), on_disk.as_ref()])?;
            }
            last = concat(&[last.as_ref(), disk.last.as_ref()])?;
        }
        let mut fields: Vec<Field> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| Field::new(format!("key{i}"), c.data_type().clone(), true))
            .collect();
        fields.push(Field::new("last", DataType::Int64, true));
        columns.push(last);
        for (index, accumulators) in self.accumulators.iter_mut().enumerate() {
            let saved = accumulators.save(total)?;
            let saved = match &on_disk {
                Some(disk) => concat(&[saved.as_ref(), disk.calls[index].as_ref()])?,
                None => saved,
            };
            fields.push(Field::new(
                format!("call{index}"),
                saved.data_type().clone(),
                true,
            ));
            columns.push(saved);
        }
        let keys = ipc(RecordBatch::try_new(
            Arc::new(Schema::new(fields)),
            columns,
        )?)?;

        // The kept rows: each key's frame oldest first, then the waiting ones in time order.
        let mut kept: Vec<(RowRef, u32, i64, bool)> = Vec::new();
        for (key, frame) in self.retained.iter().enumerate() {
            kept.extend(
                frame
                    .iter()
                    .map(|&(time, row)| (row, key as u32, time, false)),
            );
        }
        for (&(time, key), rows) in &self.pending {
            kept.extend(rows.iter().map(|&row| (row, key as u32, time, true)));
        }
        let refs: Vec<RowRef> = kept.iter().map(|(row, ..)| *row).collect();
        let (sources, picks) = Self::sources(&refs);
        let input = self.input_schema.clone();
        let mut columns = Vec::with_capacity(input.fields().len() + 3);
        for column in 0..input.fields().len() {
            let arrays: Vec<&dyn Array> = sources
                .iter()
                .map(|number| self.stored[number].batch.column(column).as_ref())
                .collect();
            columns.push(if arrays.is_empty() {
                datafusion::arrow::array::new_empty_array(input.field(column).data_type())
            } else {
                interleave(&arrays, &picks)?
            });
        }
        let mut fields: Vec<Field> = input.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new("__key", DataType::UInt32, false));
        fields.push(Field::new("__time", DataType::Int64, false));
        fields.push(Field::new("__waiting", DataType::Boolean, false));
        let (mut row_keys, mut row_times): (Vec<u32>, Vec<i64>) =
            kept.iter().map(|k| (k.1, k.2)).unzip();
        let mut waiting: Vec<bool> = kept.iter().map(|k| k.3).collect();
        if let Some(disk) = on_disk {
            // The frames of the keys on disk follow the rows in memory.
            for (column, on_disk) in columns.iter_mut().zip(&disk.rows) {
                *column = concat(&[column.as_ref(), on_disk.as_ref()])?;
            }
            waiting.resize(waiting.len() + disk.row_keys.len(), false);
            row_keys.extend(disk.row_keys);
            row_times.extend(disk.row_times);
        }
        columns.push(Arc::new(UInt32Array::from(row_keys)));
        columns.push(Arc::new(Int64Array::from(row_times)));
        columns.push(Arc::new(BooleanArray::from(waiting)));
        let rows = ipc(RecordBatch::try_new(
            Arc::new(Schema::new(fields)),
            columns,
        )?)?;
        let saved = Saved {
            format: FORMAT,
            watermarks: self.watermarks.clone(),
            keys,
            rows,
        };
        postcard::to_allocvec(&saved)
            .map_err(|e| exec_datafusion_err!("the OVER window's state cannot be encoded: {e}"))
    }

    /// Takes back a checkpoint's keys and rows (those of the keys `keep` says are this
    /// processor's, when given), beside any taken before.
    pub(super) fn take_back(&mut self, bytes: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        let saved: Saved = postcard::from_bytes(bytes)
            .map_err(|e| exec_datafusion_err!("the OVER window's state does not read: {e}"))?;
        if saved.format != FORMAT {
            return exec_err!(
                "the OVER window's state has format {}, this build reads format {FORMAT}",
                saved.format
            );
        }
        if saved.watermarks.sources() != self.watermarks.sources() {
            return exec_err!(
                "the OVER window's state was taken with {} input partitions, this one reads {}",
                saved.watermarks.sources(),
                self.watermarks.sources()
            );
        }
        self.watermarks.advance_to(&saved.watermarks);
        let keys = read_one(&saved.keys)?;
        let width = self.keys.len();
        let expected = width + 1 + self.calls.len();
        if keys.num_columns() != expected {
            return exec_err!(
                "the OVER window's saved keys have {} columns, this one needs {expected}: was the snapshot taken of another query?",
                keys.num_columns()
            );
        }
        let kept = match keep {
            Some(keep) => keep(&keys.columns()[..width], keys.num_rows())?,
            None => vec![true; keys.num_rows()],
        };
        // Each saved key's id here (`None`: another processor's).
        let mut ids: Vec<Option<usize>> = vec![None; keys.num_rows()];
        let chosen = UInt32Array::from_iter_values(
            (0..keys.num_rows() as u32).filter(|&k| kept[k as usize]),
        );
        let new_ids = match &mut self.key_ids {
            Some(values) => {
                let columns = keys.columns()[..width]
                    .iter()
                    .map(|c| Ok(take(c, &chosen, None)?))
                    .collect::<Result<Vec<_>>>()?;
                let mut new_ids = Vec::with_capacity(chosen.len());
                values.intern(&columns, &mut new_ids)?;
                new_ids
            }
            None => vec![0; chosen.len()],
        };
        for (&saved_key, &id) in chosen.values().iter().zip(&new_ids) {
            ids[saved_key as usize] = Some(id);
        }
        let total = new_ids
            .iter()
            .max()
            .map_or(0, |k| k + 1)
            .max(self.last.len());
        self.last.resize(total, None);
        self.retained.resize_with(total, VecDeque::new);
        let Some(last) = keys.column(width).as_primitive_opt::<Int64Type>() else {
            return exec_err!(
                "the OVER window's saved times are {}",
                keys.column(width).data_type()
            );
        };
        for (&saved_key, &id) in chosen.values().iter().zip(&new_ids) {
            let at = saved_key as usize;
            self.last[id] = last.is_valid(at).then(|| last.value(at));
        }
        for (index, accumulators) in self.accumulators.iter_mut().enumerate() {
            let saved = take(keys.column(width + 1 + index), &chosen, None)?;
            self.calls[index].restore_into(accumulators.as_mut(), &saved, &new_ids, total)?;
        }

        let rows = read_one(&saved.rows)?;
        let input = self.input_schema.fields().len();
        if rows.num_columns() != input + 3 {
            return exec_err!(
                "the OVER window's saved rows have {} columns, its input has {input}",
                rows.num_columns() - 3
            );
        }
        let typed = rows
            .column(input)
            .as_primitive_opt::<UInt32Type>()
            .is_some()
            && rows
                .column(input + 1)
                .as_primitive_opt::<Int64Type>()
                .is_some()
            && rows.column(input + 2).as_boolean_opt().is_some();
        if !typed {
            return exec_err!("the OVER window's saved rows are not of this build");
        }
        let key = rows.column(input).as_primitive::<UInt32Type>();
        let mine = BooleanArray::from_iter(
            key.values()
                .iter()
                .map(|&k| Some(ids.get(k as usize).copied().flatten().is_some())),
        );
        let rows = filter_record_batch(&rows, &mine)?;
        if rows.num_rows() == 0 {
            return self.move_out_if_full();
        }
        let batch =
            RecordBatch::try_new(self.input_schema.clone(), rows.columns()[..input].to_vec())?;
        let number = self.keep_batch(batch, rows.num_rows())?;
        let (key, time, waiting) = (
            rows.column(input).as_primitive::<UInt32Type>(),
            rows.column(input + 1).as_primitive::<Int64Type>(),
            rows.column(input + 2).as_boolean(),
        );
        for row in 0..rows.num_rows() {
            let id = ids[key.value(row) as usize].expect("rows of other keys are filtered out");
            let at = (number, row as u32);
            if waiting.value(row) {
                self.pending
                    .entry((time.value(row), id))
                    .or_default()
                    .push(at);
            } else {
                self.retained[id].push_back((time.value(row), at));
            }
        }
        // A snapshot larger than the memory budget goes back to disk.
        self.move_out_if_full()
    }
}

fn ipc(batch: RecordBatch) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut writer = StreamWriter::try_new(&mut bytes, &batch.schema())?;
    writer.write(&batch)?;
    writer.finish()?;
    drop(writer);
    Ok(bytes)
}

fn read_one(bytes: &[u8]) -> Result<RecordBatch> {
    let unreadable = |e: &dyn std::fmt::Display| {
        exec_datafusion_err!("the OVER window's state does not read: {e}")
    };
    let mut reader = StreamReader::try_new(bytes, None).map_err(|e| unreadable(&e))?;
    match reader.next() {
        Some(batch) => batch.map_err(|e| unreadable(&e)),
        None => Err(unreadable(&"no rows")),
    }
}
