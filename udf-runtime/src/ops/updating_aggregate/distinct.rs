//! DISTINCT calls: each group keeps how many rows hold each distinct argument value, and the
//! call's own accumulators see a value only when it comes (its count leaves 0) and when it
//! goes (its count returns to 0) — Flink's distinct views over a changelog.

use std::collections::HashMap;

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BinaryBuilder, BooleanArray, BooleanBufferBuilder};
use datafusion::arrow::datatypes::FieldRef;
use datafusion::arrow::row::{OwnedRow, RowConverter, SortField};
use datafusion::common::{Result, not_impl_err};

use super::aggregator::Aggregator;
use super::saved;
use super::value_counts;

pub(super) struct Distinct {
    inner: Box<dyn Aggregator>,
    converter: RowConverter,
    /// Per group: each distinct argument row and how many input rows hold it.
    counts: Vec<HashMap<OwnedRow, i64>>,
}

impl Distinct {
    pub(super) fn new(inner: Box<dyn Aggregator>, args: &[FieldRef]) -> Result<Self> {
        let fields = args
            .iter()
            .map(|f| SortField::new(f.data_type().clone()))
            .collect();
        Ok(Distinct {
            inner,
            converter: RowConverter::new(fields)?,
            counts: Vec::new(),
        })
    }
}

impl Aggregator for Distinct {
    fn fold(
        &mut self,
        args: &[ArrayRef],
        groups: &[usize],
        add: &BooleanArray,
        retract: &BooleanArray,
        total_groups: usize,
        rows: Option<&[u32]>,
    ) -> Result<()> {
        if self.counts.len() < total_groups {
            self.counts.resize_with(total_groups, HashMap::new);
        }
        let values = self.converter.convert_columns(args)?;
        let mut comes = BooleanBufferBuilder::new(groups.len());
        let mut goes = BooleanBufferBuilder::new(groups.len());
        for (row, &group) in groups.iter().enumerate() {
            let (adding, taking) = (add.value(row), retract.value(row));
            if !adding && !taking {
                comes.append(false);
                goes.append(false);
                continue;
            }
            let counts = &mut self.counts[group];
            let value = values.row(row).owned();
            if adding {
                let count = counts.entry(value).or_insert(0);
                *count += 1;
                comes.append(*count == 1);
                goes.append(false);
            } else {
                // A value never seen is ignored, as Flink ignores retracting it.
                let gone = match counts.get_mut(&value) {
                    Some(count) => {
                        *count -= 1;
                        *count == 0
                    }
                    None => false,
                };
                if gone {
                    counts.remove(&value);
                }
                comes.append(false);
                goes.append(gone);
            }
        }
        let comes = BooleanArray::new(comes.finish(), None);
        let goes = BooleanArray::new(goes.finish(), None);
        self.inner
            .fold(args, groups, &comes, &goes, total_groups, rows)
    }

    fn evaluate(&mut self, groups: &[usize]) -> Result<ArrayRef> {
        self.inner.evaluate(groups)
    }

    /// Two sessions' distinct values may overlap: their accumulators cannot simply merge.
    fn merge(&mut self, _into: usize, _from: usize, _total_groups: usize) -> Result<()> {
        not_impl_err!("DISTINCT aggregates in session windows are not supported")
    }

    fn clear(&mut self, groups: &[usize]) {
        for &group in groups {
            if let Some(counts) = self.counts.get_mut(group) {
                counts.clear();
            }
        }
        self.inner.clear(groups);
    }

    /// `{values, inner}` per group: the distinct values with their row counts, and the
    /// call's own accumulator.
    fn save(&mut self, total_groups: usize) -> Result<ArrayRef> {
        if self.counts.len() < total_groups {
            self.counts.resize_with(total_groups, HashMap::new);
        }
        let mut values = BinaryBuilder::with_capacity(total_groups, total_groups * 16);
        for counts in &self.counts[..total_groups] {
            value_counts::append(&mut values, counts.iter().map(|(v, &n)| (v.as_ref(), n)))?;
        }
        let inner = self.inner.save(total_groups)?;
        saved::pair(("values", Arc::new(values.finish())), ("inner", inner))
    }

    fn restore(&mut self, saved: &ArrayRef, groups: &[usize], total_groups: usize) -> Result<()> {
        if self.counts.len() < total_groups {
            self.counts.resize_with(total_groups, HashMap::new);
        }
        let (values, inner) = saved::columns_of(saved, "DISTINCT values")?;
        let values = value_counts::array(values)?;
        let parser = self.converter.parser();
        for (row, &group) in groups.iter().enumerate() {
            self.counts[group] = value_counts::read(values, row)?
                .iter()
                .map(|(value, count)| (parser.parse(value).owned(), *count))
                .collect();
        }
        self.inner.restore(inner, groups, total_groups)
    }
}
