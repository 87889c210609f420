//! Snapshots of a keyed-state unit: bytes (postcard) holding every live state entry and timer
//! by its key's bytes, the ORDER BY rows waiting (Arrow IPC), the watermarks received and the
//! processing time. Restoring into a fresh unit of the same function gives it what the
//! original had; slot numbers are not kept, so the new unit may assign others.
//!
//! Each entry is saved with its kind and declared type: an entry the function now declares
//! with another type is an error naming it, not bytes read as a type they were not written
//! as (a type changed under the same name is caught when its bytes do not read exactly).

use std::collections::HashSet;
use std::io::Cursor;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::common::{DataFusionError, Result, exec_err};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use udf_core::{StateKind, StateSpec};

use super::KeyedState;
use super::packed::{Blob, Pairs};
use crate::streaming::watermarks::SourceWatermarks;

/// Changes whenever the layout below does.
const FORMAT: u32 = 4;

#[derive(Serialize, Deserialize)]
struct Saved {
    format: u32,
    function: String,
    /// The key columns' types, as Arrow prints them (key bytes mean something only for them).
    key_types: Vec<String>,
    entries: Vec<SavedEntry>,
    /// In firing order.
    timers: Vec<SavedTimer>,
    timers_fired_at: Option<i64>,
    watermarks: SourceWatermarks,
    now: i64,
    /// The rows waiting for ORDER BY, per table argument.
    waiting: Vec<Option<SavedRows>>,
}

#[derive(Serialize, Deserialize)]
struct SavedEntry {
    name: String,
    /// The entry's kind and type as declared (`StateSpec`'s, e.g. `MapView<String, i64>`).
    declared: Declared,
    /// (key bytes, the entry as its store saved it), packed.
    keys: Pairs,
}

/// What a state entry was declared as.
#[derive(Serialize, Deserialize, PartialEq)]
struct Declared {
    kind: String,
    rust_type: String,
    /// The SQL type of a `Row` value, as Arrow prints it.
    data_type: Option<String>,
}

impl Declared {
    fn of(spec: &StateSpec) -> Self {
        Declared {
            kind: match spec.kind {
                StateKind::Value => "value",
                StateKind::List => "list",
                StateKind::Map => "map",
            }
            .to_owned(),
            rust_type: spec.rust_type.clone(),
            data_type: spec.data_type.as_ref().map(ToString::to_string),
        }
    }
}

impl std::fmt::Display for Declared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} state `{}`", self.kind, self.rust_type)?;
        if let Some(data_type) = &self.data_type {
            write!(f, " ({data_type})")?;
        }
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
struct SavedTimer {
    key: Vec<u8>,
    time: i64,
    name: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct SavedRows {
    /// One Arrow IPC stream of the rows, in arrival order.
    ipc: Blob,
    times: Vec<i64>,
}

fn unreadable(function: &str, entry: &str, error: &str) -> DataFusionError {
    DataFusionError::Execution(format!(
        "the state snapshot of `{function}` does not read: state entry `{entry}`: {error}"
    ))
}

fn failed(what: &str, error: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("{what}: {error}"))
}

impl KeyedState {
    /// Everything the unit holds, as bytes.
    pub fn snapshot(&self) -> Result<Vec<u8>> {
        let key_of = |slot: u32| {
            self.keys.key_bytes(slot).ok_or_else(|| {
                DataFusionError::Internal(format!("key slot {slot} holds state but no key"))
            })
        };
        let mut entries = Vec::with_capacity(self.entries.len());
        // One key's bytes and entry at a time, then packed: no allocation per key.
        let (mut key, mut saved) = (Vec::new(), Vec::new());
        for (index, spec) in self.entries.iter().enumerate() {
            let store = self.store(index);
            let mut keys = Pairs::default();
            for slot in store.occupied() {
                saved.clear();
                if !store
                    .save(slot, self.now, &mut saved)
                    .map_err(|e| self.entry_error(index, e))?
                {
                    continue;
                }
                key.clear();
                if !self.keys.append_key_bytes(slot, &mut key) {
                    return Err(DataFusionError::Internal(format!(
                        "key slot {slot} holds state but no key"
                    )));
                }
                keys.push(&key, &saved);
            }
            if let Some(disk) = &self.disk {
                let resident = |bytes: &[u8]| self.keys.find_bytes(bytes).is_some();
                for (key, saved) in disk.stored(index, spec, self.now, &resident)? {
                    keys.push(&key, &saved);
                }
            }
            entries.push(SavedEntry {
                name: spec.name.clone(),
                declared: Declared::of(spec),
                keys,
            });
        }
        // In memory and on disk, merged into firing order (by time, then registration).
        let mut timers = self
            .timers
            .registered()
            .into_iter()
            .map(|(slot, time, id, name)| Ok((time, id, key_of(slot)?, name)))
            .collect::<Result<Vec<_>>>()?;
        if let Some(disk) = &self.disk {
            for (key, key_timers) in disk.stored_timers()? {
                timers.extend(
                    key_timers
                        .into_iter()
                        .map(|t| (t.time, t.id, key.clone(), t.name)),
                );
            }
            timers.sort_unstable_by_key(|&(time, id, ..)| (time, id));
        }
        let timers = timers
            .into_iter()
            .map(|(time, _, key, name)| SavedTimer {
                key,
                time,
                name: name.map(|n| n.to_string()),
            })
            .collect();
        let mut waiting = Vec::with_capacity(self.sorters.len());
        for sorter in &self.sorters {
            waiting.push(match sorter.as_ref().map(|s| s.waiting()).transpose()? {
                Some(Some((batch, times))) => Some(SavedRows {
                    ipc: Blob(ipc_bytes(&batch)?),
                    times,
                }),
                _ => None,
            });
        }
        let saved = Saved {
            format: FORMAT,
            function: self.function.clone(),
            key_types: self.key_types.iter().map(ToString::to_string).collect(),
            entries,
            timers,
            timers_fired_at: self.timers.fired_at(),
            watermarks: self.watermarks.clone(),
            now: self.now,
            waiting,
        };
        postcard::to_stdvec(&saved).map_err(|e| failed("a state snapshot could not be written", e))
    }

    /// Takes the state of `snapshot` (a fresh unit of the same function: it must hold
    /// nothing yet).
    pub fn restore(&mut self, snapshot: &[u8]) -> Result<()> {
        self.restore_where(snapshot, None)
    }

    /// Takes the keys of `snapshot` that `part.keep` says are this unit's, beside what the
    /// parts before gave it: a restore into another processor count, where each processor
    /// reads the snapshot of every processor that saved (`part.index` numbers them from 0).
    pub fn restore_part(&mut self, snapshot: &[u8], part: RestorePart<'_>) -> Result<()> {
        self.restore_where(snapshot, Some(part))
    }

    fn restore_where(&mut self, snapshot: &[u8], part: Option<RestorePart<'_>>) -> Result<()> {
        let function = self.function.clone();
        let saved: Saved = postcard::from_bytes(snapshot).map_err(|e| {
            failed(
                &format!("a state snapshot of `{function}` does not read"),
                e,
            )
        })?;
        if saved.format != FORMAT {
            return exec_err!(
                "the state snapshot has format {}, this build reads format {FORMAT}",
                saved.format
            );
        }
        let key_types: Vec<String> = self.key_types.iter().map(ToString::to_string).collect();
        if saved.key_types != key_types {
            return exec_err!(
                "the state snapshot of `{}` is keyed by ({}), but `{function}` is partitioned by ({}) here",
                saved.function,
                saved.key_types.join(", "),
                key_types.join(", ")
            );
        }
        if saved.watermarks.sources() != self.watermarks.sources() {
            return exec_err!(
                "the state snapshot of `{function}` was taken with {} input partitions, this processor reads {}",
                saved.watermarks.sources(),
                self.watermarks.sources()
            );
        }
        let first = part.as_ref().is_none_or(|p| p.index == 0);
        if first && (self.keys.len() > 0 || self.timers_held() > 0 || self.rows_waiting() > 0) {
            return exec_err!("state is restored into a fresh processor of `{function}` only");
        }
        let kept = match &part {
            None => None,
            Some(part) => Some(self.kept_keys(&saved, part)?),
        };
        let keep = |key: &[u8]| kept.as_ref().is_none_or(|kept| kept.contains(key));
        for entry in saved.entries {
            let Some(index) = self.entries.iter().position(|e| e.name == entry.name) else {
                return exec_err!(
                    "the state snapshot holds state entry `{}`, which `{function}` does not declare",
                    entry.name
                );
            };
            let declared = Declared::of(&self.entries[index]);
            if entry.declared != declared {
                return exec_err!(
                    "state entry `{}` of `{function}` was saved as {}, but `{function}` now declares {declared}: the saved state cannot be read as the new type",
                    entry.name,
                    entry.declared
                );
            }
            for pair in entry.keys.iter() {
                let (key, bytes) = pair.map_err(|e| unreadable(&function, &entry.name, e))?;
                if !keep(key) {
                    continue;
                }
                let slot = self.resident_slot(key)?;
                let restored = self
                    .stores
                    .entry_mut(index)
                    .expect("the stores have every declared entry")
                    .restore(slot, bytes);
                restored.map_err(|e| self.entry_error(index, e))?;
            }
        }
        for timer in saved.timers {
            if !keep(&timer.key) {
                continue;
            }
            let slot = self.resident_slot(&timer.key)?;
            self.timers
                .register_timer(slot, timer.name.as_deref(), timer.time);
        }
        // Every processor saw the same watermarks at a checkpoint's barriers (it aligned
        // them); timers fired up to the latest of them, processing time the latest.
        let fired_at = if first {
            saved.timers_fired_at
        } else {
            self.timers.fired_at().max(saved.timers_fired_at)
        };
        self.timers.set_fired_at(fired_at);
        self.watermarks = saved.watermarks;
        self.now = if first {
            saved.now
        } else {
            self.now.max(saved.now)
        };
        for (table, rows) in saved.waiting.into_iter().enumerate() {
            let Some(rows) = rows else { continue };
            let batch = ipc_batch(&rows.ipc.0)?;
            let Some(sorter) = self.sorter_mut(table) else {
                return exec_err!(
                    "the state snapshot holds rows waiting for ORDER BY of table argument {}, but this call of `{function}` has no ORDER BY there",
                    table + 1
                );
            };
            // Of another processor count's snapshot, the rows of this processor's keys.
            let kept: Vec<u32> = match &part {
                None => (0..batch.num_rows() as u32).collect(),
                Some(part) => (part.rows)(table, &batch)?
                    .into_iter()
                    .enumerate()
                    .filter(|(_, kept)| *kept)
                    .map(|(row, _)| row as u32)
                    .collect(),
            };
            sorter.insert(&batch, &kept, &rows.times)?;
        }
        Ok(())
    }

    /// The keys of `saved` (by their bytes) that `part` keeps.
    fn kept_keys(&self, saved: &Saved, part: &RestorePart<'_>) -> Result<HashSet<Vec<u8>>> {
        let mut all: HashSet<&[u8]> = HashSet::new();
        for entry in &saved.entries {
            for pair in entry.keys.iter() {
                let (key, _) = pair.map_err(|e| unreadable(&self.function, &entry.name, e))?;
                all.insert(key);
            }
        }
        all.extend(saved.timers.iter().map(|timer| timer.key.as_slice()));
        let all: Vec<&[u8]> = all.into_iter().collect();
        let arrays = self.keys.arrays_of_bytes(&all, &self.key_types)?;
        let kept = (part.keep)(&arrays, all.len())?;
        Ok(all
            .into_iter()
            .zip(kept)
            .filter(|(_, kept)| *kept)
            .map(|(key, _)| key.to_vec())
            .collect())
    }
}

/// Given the key columns of some keys (and their count, for a function without keys), which
/// of them are this processor's.
pub type KeepKeys<'a> =
    dyn Fn(&[datafusion::arrow::array::ArrayRef], usize) -> Result<Vec<bool>> + 'a;

/// One of the snapshots a processor restores from when the processor count changed.
pub struct RestorePart<'a> {
    /// Which (from 0): the first one starts a fresh unit.
    pub index: usize,
    pub keep: &'a KeepKeys<'a>,
    /// Of rows waiting for ORDER BY of a table argument (by its number), which are this
    /// processor's.
    pub rows: &'a dyn Fn(usize, &RecordBatch) -> Result<Vec<bool>>,
}

fn ipc_bytes(batch: &RecordBatch) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut writer = StreamWriter::try_new(&mut bytes, &batch.schema())?;
    writer.write(batch)?;
    writer.finish()?;
    drop(writer);
    Ok(bytes)
}

fn ipc_batch(bytes: &[u8]) -> Result<RecordBatch> {
    let reader = StreamReader::try_new(Cursor::new(bytes), None)?;
    let schema = reader.schema();
    let batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(datafusion::arrow::compute::concat_batches(
        &schema, &batches,
    )?)
}

/// A value entry as stores save it: `(written, value)`.
pub(super) fn encode_value<T: Serialize>(
    written: i64,
    value: &T,
) -> Result<Vec<u8>, udf_core::Error> {
    postcard::to_stdvec(&(written, value))
        .map_err(|e| udf_core::Error::msg(format!("the value could not be encoded: {e}")))
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, udf_core::Error> {
    postcard::from_bytes(bytes).map_err(|e| {
        udf_core::Error::msg(format!(
            "the entry does not read as `{}`: {e}",
            std::any::type_name::<T>()
        ))
    })
}

pub(super) fn decode_value<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, udf_core::Error> {
    decode::<(i64, T)>(bytes).map(|(_, value)| value)
}

pub(super) fn decode_list<T: DeserializeOwned>(bytes: &[u8]) -> Result<Vec<T>, udf_core::Error> {
    decode::<Vec<(i64, T)>>(bytes).map(|entries| entries.into_iter().map(|(_, v)| v).collect())
}

pub(super) fn decode_map<K: DeserializeOwned, V: DeserializeOwned>(
    bytes: &[u8],
) -> Result<Vec<(K, V)>, udf_core::Error> {
    decode::<Vec<(K, (i64, V))>>(bytes)
        .map(|entries| entries.into_iter().map(|(k, (_, v))| (k, v)).collect())
}
