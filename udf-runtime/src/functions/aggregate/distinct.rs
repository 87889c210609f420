//! `f(DISTINCT a, b, ...)` for a user-defined aggregate: each distinct argument row is
//! folded into the function's accumulator once.
//!
//! DataFusion rewrites some single-argument DISTINCT aggregates into a GROUP BY; every other
//! DISTINCT call reaches the function, which keeps the set itself. Argument rows are keyed
//! in Arrow's row format, with a count per row so that bounded OVER frames can retract: a
//! row reaches `accumulate` when its count becomes 1 and `retract` when it drops to 0.
//! Partial aggregates travel as the list of distinct rows (LIST<BINARY>), and merging adds
//! the rows not seen yet.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, BinaryArray, BinaryBuilder, ListArray, UInt32Array,
};
use datafusion::arrow::compute::take_arrays;
use datafusion::arrow::datatypes::{DataType as ArrowType, Field, FieldRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::utils::SingleRowListArrayBuilder;
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err};
use datafusion::logical_expr::Accumulator;
use datafusion::logical_expr::utils::format_state_name;

use super::single_group::SingleGroup;

/// The state field of a DISTINCT call: the distinct argument rows, in Arrow's row format.
pub(super) fn state_field(name: &str) -> FieldRef {
    Arc::new(Field::new(
        format_state_name(name, "distinct_rows"),
        ArrowType::List(Arc::new(Field::new_list_field(ArrowType::Binary, true))),
        true,
    ))
}

/// One group of a DISTINCT call.
#[derive(Debug)]
pub(super) struct DistinctGroup {
    inner: SingleGroup,
    converter: RowConverter,
    /// Each distinct argument row with the number of times it is present.
    counts: HashMap<Box<[u8]>, usize>,
}

impl DistinctGroup {
    pub(super) fn new(inner: SingleGroup, arg_types: &[ArrowType]) -> Result<Self> {
        let fields = arg_types.iter().cloned().map(SortField::new).collect();
        Ok(DistinctGroup {
            inner,
            converter: RowConverter::new(fields)?,
            counts: HashMap::new(),
        })
    }

    /// Positions of the rows of `values` whose count crosses between 0 and 1 in the
    /// direction of `step`.
    fn crossing(&mut self, values: &[ArrayRef], step: Step) -> Result<Vec<u32>> {
        let rows = self.converter.convert_columns(values)?;
        let mut crossing = Vec::new();
        for (index, row) in rows.iter().enumerate() {
            let key = row.as_ref();
            let crossed = match step {
                Step::Add => match self.counts.get_mut(key) {
                    Some(count) => {
                        *count += 1;
                        false
                    }
                    None => {
                        self.counts.insert(key.into(), 1);
                        true
                    }
                },
                Step::Remove => match self.counts.get_mut(key) {
                    Some(1) => {
                        self.counts.remove(key);
                        true
                    }
                    Some(count) => {
                        *count -= 1;
                        false
                    }
                    None => {
                        return exec_err!(
                            "a row leaves the DISTINCT set of `{}` that never entered it",
                            self.inner.name()
                        );
                    }
                },
            };
            if crossed {
                crossing.push(index as u32);
            }
        }
        Ok(crossing)
    }
}

#[derive(Clone, Copy)]
enum Step {
    Add,
    Remove,
}

fn pick(values: &[ArrayRef], rows: Vec<u32>) -> Result<Vec<ArrayRef>> {
    let indices = UInt32Array::from(rows);
    Ok(take_arrays(values, &indices, None)?)
}

impl Accumulator for DistinctGroup {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let new_rows = self.crossing(values, Step::Add)?;
        if new_rows.is_empty() {
            return Ok(());
        }
        self.inner.update_batch(&pick(values, new_rows)?)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        if !self.inner.supports_retract_batch() {
            // Names the function and the missing method.
            return self.inner.retract_batch(values);
        }
        let gone = self.crossing(values, Step::Remove)?;
        if gone.is_empty() {
            return Ok(());
        }
        self.inner.retract_batch(&pick(values, gone)?)
    }

    fn supports_retract_batch(&self) -> bool {
        self.inner.supports_retract_batch()
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        self.inner.evaluate()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let bytes: usize = self.counts.keys().map(|k| k.len()).sum();
        let mut rows = BinaryBuilder::with_capacity(self.counts.len(), bytes);
        for key in self.counts.keys() {
            rows.append_value(key);
        }
        let rows: ArrayRef = Arc::new(rows.finish());
        Ok(vec![
            SingleRowListArrayBuilder::new(rows).build_list_scalar(),
        ])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let lists = states[0]
            .as_any()
            .downcast_ref::<ListArray>()
            .ok_or_else(|| {
                DataFusionError::Internal(format!(
                    "partial DISTINCT rows of `{}` arrive as {}",
                    self.inner.name(),
                    states[0].data_type()
                ))
            })?;
        let parser = self.converter.parser();
        let mut new_rows = Vec::new();
        for list in lists.iter().flatten() {
            let Some(rows) = list.as_any().downcast_ref::<BinaryArray>() else {
                return exec_err!("partial DISTINCT rows arrive as {}", list.data_type());
            };
            for bytes in rows.iter().flatten() {
                if !self.counts.contains_key(bytes) {
                    self.counts.insert(bytes.into(), 1);
                    new_rows.push(bytes.to_vec());
                }
            }
        }
        if new_rows.is_empty() {
            return Ok(());
        }
        let columns = self
            .converter
            .convert_rows(new_rows.iter().map(|bytes| parser.parse(bytes)))?;
        self.inner.update_batch(&columns)
    }

    fn size(&self) -> usize {
        let keys: usize = self.counts.keys().map(|k| k.len()).sum();
        std::mem::size_of::<Self>()
            + self.inner.size()
            + self.converter.size()
            + keys
            + self.counts.capacity() * std::mem::size_of::<(Box<[u8]>, usize)>()
    }
}
