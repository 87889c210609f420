//! The key values of each group, kept beside its accumulator so that a failure can name the
//! group. Each batch that creates groups adds one chunk: the key columns taken at the first
//! row of each new group (one `take` per batch, nothing per group).

use std::collections::VecDeque;

use datafusion::arrow::array::{Array, ArrayRef, UInt32Array};
use datafusion::arrow::compute::{concat, take};
use datafusion::common::{Result, internal_err};
use udf_core::Emit;

use crate::functions::errors::display_value;

/// The keys of the groups of one aggregation, in group order.
#[derive(Debug)]
pub(in crate::functions::aggregate) struct GroupKeys {
    /// How many key columns there are.
    width: usize,
    /// The keys of the groups numbered from `start`, oldest first. Groups are numbered from
    /// the first ever created, so emitting early groups does not renumber the chunks.
    chunks: VecDeque<Chunk>,
    /// The number of the aggregation's current group 0 (those before it are emitted).
    first: usize,
    /// The number the next new group gets.
    next: usize,
}

#[derive(Debug)]
struct Chunk {
    start: usize,
    columns: Vec<ArrayRef>,
}

impl Chunk {
    fn end(&self) -> usize {
        self.start + self.columns.first().map_or(0, |c| c.len())
    }
}

impl GroupKeys {
    pub(in crate::functions::aggregate) fn new(width: usize) -> Self {
        GroupKeys {
            width,
            chunks: VecDeque::new(),
            first: 0,
            next: 0,
        }
    }

    pub(in crate::functions::aggregate) fn width(&self) -> usize {
        self.width
    }

    /// Records the keys of the groups that this batch creates (`total_groups` counts them).
    pub(in crate::functions::aggregate) fn record(
        &mut self,
        keys: &[ArrayRef],
        groups: &[usize],
        total_groups: usize,
    ) -> Result<()> {
        if keys.len() != self.width {
            return internal_err!("{} group key columns, not {}", keys.len(), self.width);
        }
        let known = self.next - self.first;
        if total_groups <= known {
            return Ok(());
        }
        // New groups are numbered in order of their first row, but not always: rows whose
        // hash meets an existing group's are settled later. So each new group's first row
        // is looked for; one that had none would show NULL keys.
        let mut first_rows = vec![None; total_groups - known];
        for (row, &group) in groups.iter().enumerate() {
            if let Some(first) = group.checked_sub(known).and_then(|i| first_rows.get_mut(i))
                && first.is_none()
            {
                *first = Some(row as u32);
            }
        }
        let rows = UInt32Array::from(first_rows);
        let columns = keys
            .iter()
            .map(|column| take(column.as_ref(), &rows, None))
            .collect::<Result<Vec<_>, _>>()?;
        self.chunks.push_back(Chunk {
            start: self.next,
            columns,
        });
        self.next = total_groups + self.first;
        Ok(())
    }

    /// `a, 1`: the key of the aggregation's group `group`, if it was recorded.
    pub(in crate::functions::aggregate) fn describe(&self, group: usize) -> Option<String> {
        let number = self.first + group;
        let at = self.chunks.partition_point(|chunk| chunk.start <= number);
        let chunk = self.chunks.get(at.checked_sub(1)?)?;
        if number >= chunk.end() {
            return None;
        }
        let values: Vec<String> = chunk
            .columns
            .iter()
            .map(|column| display_value(column.as_ref(), number - chunk.start))
            .collect::<Option<_>>()?;
        Some(values.join(", "))
    }

    /// The key columns of the emitted groups, which are forgotten.
    pub(in crate::functions::aggregate) fn emit(&mut self, emit: Emit) -> Result<Vec<ArrayRef>> {
        let end = self.end_of(emit);
        let mut parts: Vec<Vec<ArrayRef>> = vec![Vec::new(); self.width];
        for chunk in &self.chunks {
            let from = self.first.max(chunk.start);
            let to = end.min(chunk.end());
            if from >= to {
                continue;
            }
            for (part, column) in parts.iter_mut().zip(&chunk.columns) {
                part.push(column.slice(from - chunk.start, to - from));
            }
        }
        let columns = parts
            .iter()
            .map(|part| {
                let part: Vec<&dyn Array> = part.iter().map(|a| a.as_ref()).collect();
                concat(&part)
            })
            .collect::<Result<Vec<_>, _>>();
        self.forget(emit);
        Ok(columns?)
    }

    /// Forgets the keys of the emitted groups.
    pub(in crate::functions::aggregate) fn forget(&mut self, emit: Emit) {
        self.first = self.end_of(emit);
        while self
            .chunks
            .front()
            .is_some_and(|chunk| chunk.end() <= self.first)
        {
            self.chunks.pop_front();
        }
    }

    fn end_of(&self, emit: Emit) -> usize {
        match emit {
            Emit::All => self.next,
            Emit::First(n) => (self.first + n).min(self.next),
        }
    }

    /// Memory held, in bytes.
    pub(in crate::functions::aggregate) fn size(&self) -> usize {
        self.chunks
            .iter()
            .flat_map(|chunk| &chunk.columns)
            .map(|column| column.get_array_memory_size())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Int64Array, StringArray};

    use super::*;

    fn keys(names: &[&str], numbers: &[i64]) -> Vec<ArrayRef> {
        vec![
            Arc::new(StringArray::from(names.to_vec())),
            Arc::new(Int64Array::from(numbers.to_vec())),
        ]
    }

    #[test]
    fn each_group_keeps_the_key_of_its_first_row() {
        let mut store = GroupKeys::new(2);
        // Groups 1 and 0 out of row order, as a hash collision settled late leaves them.
        store
            .record(&keys(&["b", "a", "b"], &[2, 1, 2]), &[1, 0, 1], 2)
            .unwrap();
        store
            .record(&keys(&["a", "c"], &[1, 3]), &[0, 2], 3)
            .unwrap();
        assert_eq!(store.describe(0).as_deref(), Some("a, 1"));
        assert_eq!(store.describe(1).as_deref(), Some("b, 2"));
        assert_eq!(store.describe(2).as_deref(), Some("c, 3"));
        assert_eq!(store.describe(3), None);
    }

    #[test]
    fn emitting_early_groups_renumbers_the_rest() {
        let mut store = GroupKeys::new(2);
        store
            .record(&keys(&["a", "b"], &[1, 2]), &[0, 1], 2)
            .unwrap();
        store.record(&keys(&["c"], &[3]), &[2], 3).unwrap();
        let emitted = store.emit(Emit::First(2)).unwrap();
        assert_eq!(emitted[0].len(), 2);
        assert_eq!(display_value(emitted[1].as_ref(), 1).as_deref(), Some("2"));
        assert_eq!(store.describe(0).as_deref(), Some("c, 3"));
        // The aggregation numbers from its group 0 again: group 1 is new.
        store.record(&keys(&["d"], &[4]), &[1], 2).unwrap();
        assert_eq!(store.describe(1).as_deref(), Some("d, 4"));
        let rest = store.emit(Emit::All).unwrap();
        assert_eq!(rest[0].len(), 2);
        assert_eq!(store.describe(0), None);
        assert_eq!(store.size(), 0);
    }
}
