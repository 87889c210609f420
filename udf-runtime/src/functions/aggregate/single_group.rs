//! One group as DataFusion's `Accumulator`: no GROUP BY, one OVER window partition (bounded
//! frames call `retract`), or one group of a DISTINCT call.

use datafusion::arrow::array::ArrayRef;
use datafusion::common::{Result, ScalarValue, exec_err};
use datafusion::logical_expr::Accumulator;

use super::folder::{Fold, Folder};

/// One group (no GROUP BY, one OVER window partition, or one group of a DISTINCT call).
#[derive(Debug)]
pub(super) struct SingleGroup {
    folder: Folder,
    /// Every row's group index: 0.
    zeros: Vec<usize>,
    retract: bool,
}

impl SingleGroup {
    pub(super) fn new(folder: Folder, retract: bool) -> Self {
        SingleGroup {
            folder,
            zeros: Vec::new(),
            retract,
        }
    }

    pub(super) fn name(&self) -> &str {
        &self.folder.name
    }

    fn zeros(&mut self, rows: usize) -> Vec<usize> {
        let mut zeros = std::mem::take(&mut self.zeros);
        zeros.resize(rows, 0);
        zeros
    }

    fn fold(&mut self, fold: Fold, values: &[ArrayRef]) -> Result<()> {
        let rows = values.first().map_or(0, |v| v.len());
        let zeros = self.zeros(rows);
        let result = self.folder.fold(fold, values, &zeros, None, 1);
        self.zeros = zeros;
        result
    }
}

impl Accumulator for SingleGroup {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.fold(Fold::Accumulate, values)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        if !self.retract {
            return exec_err!("aggregate function `{}` has no `retract`", self.folder.name);
        }
        self.fold(Fold::Retract, values)
    }

    fn supports_retract_batch(&self) -> bool {
        self.retract
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let result = self
            .folder
            .guard("get_value", |groups| groups.evaluate_group(0))?;
        ScalarValue::try_from_array(&result, 0)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let state = self
            .folder
            .guard("encoding the accumulator", |groups| groups.state_group(0))?;
        Ok(vec![ScalarValue::try_from_array(&state, 0)?])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let zeros = self.zeros(states[0].len());
        let states = states[0].clone();
        let result = self
            .folder
            .guard("merge", |groups| groups.merge(states.as_ref(), &zeros, 1));
        self.zeros = zeros;
        result
    }

    fn size(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.folder.groups.size()
            + self.zeros.capacity() * std::mem::size_of::<usize>()
    }
}
