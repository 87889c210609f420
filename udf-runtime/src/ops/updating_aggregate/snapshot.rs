//! Checkpoints of an updating GROUP BY: its live groups (those holding rows) as Arrow
//! batches in the IPC stream format — the key columns, the row count of each group, and one
//! column per aggregate call with its accumulators as the call saves them. Groups that
//! emptied are not saved, so a restored run forgets their keys. With the disk backend the
//! groups on disk follow those in memory, a batch per few thousand. A restore into another
//! partition count keeps the groups routed to this partition.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{filter_record_batch, take};
use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::common::{Result, exec_datafusion_err, exec_err, internal_err};
use datafusion::logical_expr::EmitTo;
use datafusion::physical_plan::aggregates::group_values::GroupValues;

use super::aggregation::UpdatingAggregation;
use crate::streaming::state::KeepKeys;

/// Changes whenever the layout below does.
const FORMAT: &str = "1";
const FORMAT_KEY: &str = "udf.updating_aggregate.format";

impl UpdatingAggregation {
    /// Every live group's key, row count and accumulators, as bytes; with the disk backend
    /// those of the groups on disk too, in batches after the groups in memory.
    pub(super) fn snapshot(&mut self) -> Result<Vec<u8>> {
        self.write_back_copies()?;
        let resident = self.saved_live()?;
        let schema = resident.schema();
        let mut bytes = Vec::new();
        let mut writer = StreamWriter::try_new(&mut bytes, &schema)?;
        writer.write(&resident)?;
        if let Some(disk) = &self.disk {
            disk.each_saved(&schema, |batch| Ok(writer.write(&batch)?))?;
        }
        writer.finish()?;
        drop(writer);
        Ok(bytes)
    }

    /// Every live group in memory as a saved batch (without those the store holds, with the
    /// disk backend): its key columns, its row count, and each call's saved accumulators.
    fn saved_live(&mut self) -> Result<RecordBatch> {
        let on_disk = |g: u32| {
            self.disk
                .as_ref()
                .is_some_and(|d| d.copies.get(g as usize) == Some(&true))
        };
        let live = UInt32Array::from_iter_values(
            (0..self.counts.len() as u32).filter(|&g| self.counts[g as usize] > 0 && !on_disk(g)),
        );
        self.saved(&live)
    }

    /// The saved batch of the listed groups.
    pub(super) fn saved(&mut self, groups: &UInt32Array) -> Result<RecordBatch> {
        let keys = self.key_columns()?;
        let total_groups = self.counts.len();
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        for (index, key) in keys.iter().enumerate() {
            fields.push(Field::new(
                format!("key{index}"),
                key.data_type().clone(),
                true,
            ));
            columns.push(take(key, groups, None)?);
        }
        fields.push(Field::new("rows", DataType::Int64, false));
        columns.push(take(&Int64Array::from(self.counts.clone()), groups, None)?);
        for (index, accumulators) in self.accumulators.iter_mut().enumerate() {
            let saved = accumulators.save(total_groups)?;
            fields.push(Field::new(
                format!("call{index}"),
                saved.data_type().clone(),
                true,
            ));
            columns.push(take(&saved, groups, None)?);
        }
        let metadata = [(FORMAT_KEY.to_owned(), FORMAT.to_owned())].into();
        let schema = Arc::new(Schema::new_with_metadata(fields, metadata));
        Ok(RecordBatch::try_new(schema, columns)?)
    }

    /// Takes the groups of `snapshot` (those `keep` says are this partition's, when given),
    /// beside any taken before.
    pub(super) fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<()> {
        let reader = StreamReader::try_new(snapshot, None)
            .map_err(|e| exec_datafusion_err!("the saved groups do not read: {e}"))?;
        let format = reader.schema().metadata().get(FORMAT_KEY).cloned();
        if format.as_deref() != Some(FORMAT) {
            return exec_err!(
                "the saved groups have format {}, this build reads format {FORMAT}",
                format.as_deref().unwrap_or("(none)")
            );
        }
        for batch in reader {
            let batch =
                batch.map_err(|e| exec_datafusion_err!("the saved groups do not read: {e}"))?;
            self.restore_batch(batch, keep)?;
            // A snapshot larger than the memory budget goes back to disk as it is read.
            self.move_out_if_full()?;
        }
        Ok(())
    }

    pub(super) fn restore_batch(
        &mut self,
        batch: RecordBatch,
        keep: Option<&KeepKeys<'_>>,
    ) -> Result<()> {
        let width = self.keys.len();
        let expected = width + 1 + self.calls.len();
        if batch.num_columns() != expected {
            return exec_err!(
                "the saved groups have {} columns, this query's GROUP BY needs {expected} ({width} keys, the row count, {} aggregate calls): was the snapshot taken of another query?",
                batch.num_columns(),
                self.calls.len()
            );
        }
        let batch = match keep {
            Some(keep) => {
                let kept = keep(&batch.columns()[..width], batch.num_rows())?;
                filter_record_batch(&batch, &kept.into())?
            }
            None => batch,
        };
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let mut groups = Vec::with_capacity(rows);
        let total_groups = match &mut self.group_values {
            Some(values) => {
                values.intern(&batch.columns()[..width], &mut groups)?;
                values.len()
            }
            None => {
                groups.resize(rows, 0);
                1
            }
        };
        self.counts.resize(total_groups, 0);
        let Some(counts) = batch.column(width).as_primitive_opt::<Int64Type>() else {
            return exec_err!(
                "the saved row counts are {}",
                batch.column(width).data_type()
            );
        };
        for (&group, &count) in groups.iter().zip(counts.values()) {
            self.counts[group] = count;
        }
        for (index, accumulators) in self.accumulators.iter_mut().enumerate() {
            let saved = batch.column(width + 1 + index);
            self.calls[index].restore_into(accumulators.as_mut(), saved, &groups, total_groups)?;
        }
        if let Some(disk) = &mut self.disk {
            disk.touch(&groups, total_groups);
        }
        Ok(())
    }

    /// The key of every group, in group order; the group numbers stay as they were.
    fn key_columns(&mut self) -> Result<Vec<ArrayRef>> {
        match &mut self.group_values {
            Some(values) => key_columns(values),
            None => Ok(Vec::new()),
        }
    }
}

/// The key of every group of `values`, in group order; the group numbers stay as they were.
pub(crate) fn key_columns(values: &mut Box<dyn GroupValues>) -> Result<Vec<ArrayRef>> {
    // `GroupValues` gives its keys only by handing them out; taken back in the same order,
    // each gets its number again. Handing out every key leaves the hash entries of
    // DataFusion's table of several key columns behind (interning again would read past its
    // values): `clear_shrink` drops them first.
    let keys = values.emit(EmitTo::All)?;
    values.clear_shrink(keys.first().map_or(0, |k| k.len()));
    let mut groups = Vec::new();
    values.intern(&keys, &mut groups)?;
    if groups.iter().enumerate().any(|(i, &g)| i != g) {
        return internal_err!("the GROUP BY keys were numbered anew");
    }
    Ok(keys)
}
