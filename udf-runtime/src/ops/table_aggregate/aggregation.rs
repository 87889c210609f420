//! Table aggregation, independent of the SQL engine: rows are grouped by their key values,
//! folded into each group's accumulator, and the function's emitted rows are collected with
//! their group and kind.
//!
//! Final mode (bounded input) emits each group's result once at the end. Changelog mode
//! emits after every input row, as Flink does on streams: with `emit_value`, the group's
//! previous rows are retracted (`-D`) and the new ones emitted (`+I`); with
//! `emit_update_with_retract` (preferred when both exist), only what changed. A function
//! with only `emit_update_with_retract` gets its final result by applying its own changelog.
//! With the disk backend a changelog's groups beyond the memory budget wait on disk
//! (`residency.rs`, `on_disk.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use udf_core::arrow::array::{Array, ArrayRef, UInt32Array, UInt64Array};
use udf_core::arrow::compute::take;
use udf_core::arrow::datatypes::DataType as ArrowType;
use udf_core::arrow::row::{OwnedRow, RowConverter, SortField};
use udf_core::types::DataType;
use udf_core::{
    AggregateBatch, ArgColumn, Emits, FunctionSpec, GroupFailure, RowKind, TableAggregateFunction,
    TableGroups,
};

use super::on_disk::AccumulatorsOnDisk;
use crate::functions::errors::{describe_row, display_value};

/// When results are emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd)]
pub enum EmitMode {
    /// Once per group, after the last input row.
    Final,
    /// After every input row, as a changelog.
    Changelog,
}

/// Rows emitted by the function: one column of the row type, the key values of their
/// groups, and their kinds.
pub struct Output {
    pub keys: Vec<ArrayRef>,
    pub rows: ArrayRef,
    pub kinds: Vec<RowKind>,
}

/// Group keys → dense group indexes. Without GROUP BY keys there is one group.
pub(super) enum Keys {
    Single,
    Columns {
        converter: RowConverter,
        index: HashMap<Box<[u8]>, usize>,
        rows: Vec<OwnedRow>,
    },
}

impl Keys {
    pub(super) fn new(key_types: &[ArrowType]) -> Result<Keys, String> {
        if key_types.is_empty() {
            return Ok(Keys::Single);
        }
        let fields = key_types
            .iter()
            .map(|t| SortField::new(t.clone()))
            .collect();
        Ok(Keys::Columns {
            converter: RowConverter::new(fields).map_err(|e| e.to_string())?,
            index: HashMap::new(),
            rows: Vec::new(),
        })
    }

    /// The group of each row, creating groups for new keys.
    fn ids(&mut self, columns: &[ArrayRef], rows: usize) -> Result<Vec<usize>, String> {
        let Keys::Columns {
            converter,
            index,
            rows: keys,
        } = self
        else {
            return Ok(vec![0; rows]);
        };
        let converted = converter
            .convert_columns(columns)
            .map_err(|e| e.to_string())?;
        let mut ids = Vec::with_capacity(rows);
        for row in converted.iter() {
            let next = keys.len();
            let id = *index.entry(row.as_ref().into()).or_insert(next);
            if id == next {
                keys.push(row.owned());
            }
            ids.push(id);
        }
        Ok(ids)
    }

    /// This aggregation's group for each group of `other` (same key columns), creating
    /// groups as needed. Rows of one converter mean nothing to another: go through arrays.
    fn absorb(&mut self, other: &Keys) -> Result<Vec<usize>, String> {
        match other {
            Keys::Single => Ok(vec![0]),
            Keys::Columns {
                converter, rows, ..
            } => {
                let columns = converter
                    .convert_rows(rows.iter().map(|r| r.row()))
                    .map_err(|e| e.to_string())?;
                self.ids(&columns, rows.len())
            }
        }
    }

    /// Whether a group of the key given in Arrow's row format is in memory.
    pub(super) fn has_bytes(&self, bytes: &[u8]) -> bool {
        match self {
            Keys::Single => true,
            Keys::Columns { index, .. } => index.contains_key(bytes),
        }
    }

    pub(super) fn count(&self) -> usize {
        match self {
            Keys::Single => 1,
            Keys::Columns { rows, .. } => rows.len(),
        }
    }

    /// The key of `group` in Arrow's row format (nothing without GROUP BY keys).
    pub(super) fn key_bytes(&self, group: usize) -> &[u8] {
        match self {
            Keys::Single => &[],
            Keys::Columns { rows, .. } => rows[group].row().data(),
        }
    }

    /// The group of a key given in Arrow's row format, created if new.
    pub(super) fn group_of_bytes(&mut self, bytes: &[u8]) -> usize {
        let Keys::Columns {
            converter,
            index,
            rows,
        } = self
        else {
            return 0;
        };
        let next = rows.len();
        let group = *index.entry(bytes.into()).or_insert(next);
        if group == next {
            rows.push(converter.parser().parse(bytes).owned());
        }
        group
    }

    /// The key columns of keys given in Arrow's row format.
    pub(super) fn arrays_of_bytes(&self, keys: &[&[u8]]) -> Result<Vec<ArrayRef>, String> {
        let Keys::Columns { converter, .. } = self else {
            return Ok(Vec::new());
        };
        let parser = converter.parser();
        converter
            .convert_rows(keys.iter().map(|bytes| parser.parse(bytes)))
            .map_err(|e| e.to_string())
    }

    /// `, group key: a, 1` for an error of `group` (nothing without GROUP BY keys).
    fn describe(&self, group: usize) -> String {
        let Keys::Columns {
            converter, rows, ..
        } = self
        else {
            return String::new();
        };
        let Some(row) = rows.get(group) else {
            return String::new();
        };
        let Ok(columns) = converter.convert_rows([row.row()]) else {
            return String::new();
        };
        let values: Vec<String> = columns
            .iter()
            .filter_map(|column| display_value(column.as_ref(), 0))
            .collect();
        format!(" (group key: {})", values.join(", "))
    }

    /// The key values of the given groups.
    fn columns(&self, groups: &[usize]) -> Result<Vec<ArrayRef>, String> {
        let Keys::Columns {
            converter, rows, ..
        } = self
        else {
            return Ok(vec![]);
        };
        let all = converter
            .convert_rows(rows.iter().map(|r| r.row()))
            .map_err(|e| e.to_string())?;
        let indices = UInt32Array::from_iter_values(groups.iter().map(|g| *g as u32));
        all.iter()
            .map(|column| take(column.as_ref(), &indices, None).map_err(|e| e.to_string()))
            .collect()
    }
}

/// One table aggregation (one partition's share of it).
pub struct TableAggregation {
    pub(super) name: String,
    spec: Arc<FunctionSpec>,
    pub(super) signature: usize,
    /// The function and its row type, for fresh groups (`residency.rs`).
    pub(super) function: Arc<dyn TableAggregateFunction>,
    pub(super) row_type: DataType,
    pub(super) groups: Box<dyn TableGroups>,
    emits: Emits,
    mode: EmitMode,
    /// The key columns' types, for a fresh key table (`residency.rs`).
    pub(super) key_types: Vec<ArrowType>,
    pub(super) keys: Keys,
    /// Per group: whether `emit_value` rows are out (changelog mode retracts them next time).
    pub(super) emitted: Vec<bool>,
    /// With the disk backend: the groups moved out of memory (`on_disk.rs`).
    pub(super) disk: Option<AccumulatorsOnDisk>,
}

impl TableAggregation {
    pub fn new(
        name: &str,
        function: Arc<dyn TableAggregateFunction>,
        spec: Arc<FunctionSpec>,
        signature: usize,
        row_type: DataType,
        key_types: &[ArrowType],
        mode: EmitMode,
    ) -> Result<TableAggregation, String> {
        let emits = function.emits();
        let groups = function
            .clone()
            .create_groups(signature, row_type.clone())
            .map_err(|e| e.to_string())?;
        Ok(TableAggregation {
            name: name.to_owned(),
            spec,
            signature,
            function,
            row_type,
            groups,
            emits,
            mode,
            key_types: key_types.to_vec(),
            keys: Keys::new(key_types)?,
            emitted: Vec::new(),
            disk: None,
        })
    }

    /// Keeps the groups beyond the memory budget on disk. Only a changelog does: its rows
    /// are emitted batch by batch, so no row waits with a group's number while groups move.
    pub(super) fn with_disk(mut self, disk: AccumulatorsOnDisk) -> Result<Self, String> {
        if self.mode != EmitMode::Changelog {
            return Err(format!(
                "the table aggregate `{}` emits final results, which keep their groups in memory",
                self.name
            ));
        }
        self.disk = Some(disk);
        Ok(self)
    }

    /// Rows one at a time: for a changelog, or to replay the changelog of a function that
    /// only emits updates.
    fn per_row(&self) -> bool {
        self.mode == EmitMode::Changelog || !self.emits.value
    }

    /// Folds a batch in; in changelog mode, returns the rows it caused.
    pub fn push(
        &mut self,
        key_columns: &[ArrayRef],
        args: Vec<ArrayRef>,
        rows: usize,
    ) -> Result<Option<Output>, String> {
        let before = self.keys.count();
        let ids = self.keys.ids(key_columns, rows)?;
        let total = self.keys.count();
        self.move_in(&ids, before)?;
        let args: Vec<ArgColumn> = args.into_iter().map(ArgColumn::array).collect();
        if !self.per_row() {
            self.fold(&args, &ids, total, None)?;
            return Ok(None);
        }
        self.emitted.resize(total, false);
        for (row, &group) in ids.iter().enumerate() {
            let one: Vec<ArgColumn> = args
                .iter()
                .map(|c| ArgColumn::array(c.array_ref().slice(row, 1)))
                .collect();
            let retract_previous =
                self.emits.value && !self.emits.update_with_retract && self.emitted[group];
            if retract_previous {
                self.guard_group("emit_value", group, |groups| {
                    groups.emit_value(group, RowKind::Delete)
                })?;
            }
            self.fold(&one, &[group], total, Some(row))?;
            if self.emits.update_with_retract {
                self.guard_group("emit_update_with_retract", group, |groups| {
                    groups.emit_update_with_retract(group)
                })?;
            } else {
                self.guard_group("emit_value", group, |groups| {
                    groups.emit_value(group, RowKind::Insert)
                })?;
            }
            self.emitted[group] = true;
        }
        match self.mode {
            EmitMode::Changelog => {
                let output = self.take_output()?;
                self.move_out_if_full()?;
                Ok(Some(output))
            }
            // Replayed changelogs are applied once, at the end.
            EmitMode::Final => Ok(None),
        }
    }

    /// The result after the last input row.
    pub fn finish(&mut self) -> Result<Output, String> {
        match (self.mode, self.per_row()) {
            (EmitMode::Final, false) => {
                for group in 0..self.keys.count() {
                    self.guard_group("emit_value", group, |groups| {
                        groups.emit_value(group, RowKind::Insert)
                    })?;
                }
                self.take_output()
            }
            (EmitMode::Final, true) => {
                let output = self.take_output()?;
                self.apply_changelog(output)
            }
            (EmitMode::Changelog, _) => self.take_output(),
        }
    }

    /// Folds another partition's partial accumulators into this one (with `merge`).
    pub fn merge(&mut self, mut other: TableAggregation) -> Result<(), String> {
        let groups = self.keys.absorb(&other.keys)?;
        for (their_group, group) in groups.into_iter().enumerate() {
            let state = other.guard_group("encoding an accumulator", their_group, |groups| {
                groups.state(their_group)
            })?;
            self.guard_group("merge", group, |groups| groups.merge_state(group, &state))?;
        }
        Ok(())
    }

    fn fold(
        &mut self,
        args: &[ArgColumn],
        groups: &[usize],
        total: usize,
        row: Option<usize>,
    ) -> Result<(), String> {
        let mut batch = AggregateBatch {
            args,
            rows: groups.len(),
            groups,
            total_groups: total,
            filter: None,
            row: 0,
        };
        let target = &mut self.groups;
        let outcome = udf_core::catch_user_panic(|| target.accumulate(&mut batch));
        let (at, message) = match outcome {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => (batch.row, format!("failed: {error}")),
            Err(panic) => (batch.row, format!("panicked: {}", panic)),
        };
        let values = describe_row(&self.spec, self.signature, args, at);
        Err(format!(
            "table aggregate function `{}` {message} (row {} of the batch, arguments: {values})",
            self.name,
            row.unwrap_or(at)
        ))
    }

    /// A call on no one group: errors and panics name the function.
    fn guard<T>(
        &mut self,
        what: &str,
        call: impl FnOnce(&mut dyn TableGroups) -> udf_core::Result<T>,
    ) -> Result<T, String> {
        let groups = &mut self.groups;
        let failure = match udf_core::catch_user_panic(|| call(groups.as_mut())) {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(error)) => format!("failed in {what}: {error}"),
            Err(panic) => format!("panicked in {what}: {panic}"),
        };
        Err(format!(
            "table aggregate function `{}` {failure}",
            self.name
        ))
    }

    /// A call on `group`, whose failure names the group's key and accumulator.
    pub(super) fn guard_group<T>(
        &mut self,
        what: &str,
        group: usize,
        call: impl FnOnce(&mut dyn TableGroups) -> Result<T, GroupFailure>,
    ) -> Result<T, String> {
        let groups = &mut self.groups;
        let failure = match udf_core::catch_user_panic(|| call(groups.as_mut())) {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(failure)) => failure.describe(what),
            Err(panic) => format!("panicked in {what}: {panic}"),
        };
        Err(format!(
            "table aggregate function `{}` {failure}{}",
            self.name,
            self.keys.describe(group)
        ))
    }

    fn take_output(&mut self) -> Result<Output, String> {
        let (rows, owners, kinds) = self.guard("emitting rows", |groups| groups.take_emitted())?;
        let keys = self.keys.columns(&owners)?;
        Ok(Output { keys, rows, kinds })
    }

    /// The rows left when every `-D` cancels an earlier equal `+I` of the same group.
    fn apply_changelog(&mut self, output: Output) -> Result<Output, String> {
        let owners = self.owners_of(&output)?;
        let converter = RowConverter::new(vec![
            SortField::new(ArrowType::UInt64),
            SortField::new(output.rows.data_type().clone()),
        ])
        .map_err(|e| e.to_string())?;
        let rows = converter
            .convert_columns(&[
                Arc::new(UInt64Array::from(owners)) as ArrayRef,
                output.rows.clone(),
            ])
            .map_err(|e| e.to_string())?;
        let mut live: HashMap<&[u8], Vec<usize>> = HashMap::new();
        for (i, kind) in output.kinds.iter().enumerate() {
            let entry = live.entry(rows.row(i).data()).or_default();
            if kind.is_addition() {
                entry.push(i);
            } else if entry.pop().is_none() {
                return Err(format!(
                    "table aggregate function `{}` retracted a row it had not emitted",
                    self.name
                ));
            }
        }
        let mut survivors: Vec<usize> = live.into_values().flatten().collect();
        survivors.sort_unstable();
        let indices = UInt32Array::from_iter_values(survivors.iter().map(|i| *i as u32));
        let pick =
            |column: &ArrayRef| take(column.as_ref(), &indices, None).map_err(|e| e.to_string());
        Ok(Output {
            keys: output.keys.iter().map(pick).collect::<Result<_, _>>()?,
            rows: pick(&output.rows)?,
            kinds: vec![RowKind::Insert; survivors.len()],
        })
    }

    /// The group of each emitted row, recovered from its key values.
    fn owners_of(&mut self, output: &Output) -> Result<Vec<u64>, String> {
        if output.keys.is_empty() {
            return Ok(vec![0; output.rows.len()]);
        }
        let rows = output.rows.len();
        Ok(self
            .keys
            .ids(&output.keys, rows)?
            .into_iter()
            .map(|g| g as u64)
            .collect())
    }
}
