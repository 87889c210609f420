//! COUNT, SUM, AVG, MIN and MAX with retraction, as Flink computes them over a changelog:
//! SUM and AVG keep the count of values beside the sum and are NULL when it is 0; MIN and
//! MAX keep every value with its multiplicity, so that taking back the smallest finds the
//! next. Result types are DataFusion's (its planner typed the call already).

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, ArrowNativeTypeOp, ArrowPrimitiveType, AsArray, BinaryBuilder, BooleanArray,
    Int64Array, PrimitiveArray, new_null_array,
};
use datafusion::arrow::datatypes::{
    DataType, Decimal128Type, FieldRef, Float64Type, Int64Type, UInt64Type,
};
use datafusion::arrow::row::{OwnedRow, RowConverter, SortField};
use datafusion::common::{Result, plan_err};

use super::aggregator::Aggregator;
use super::saved;
use super::value_counts;

/// The accumulators of built-in `name` over arguments of `args`' types.
pub(super) fn accumulators(
    name: &str,
    args: &[FieldRef],
    output: &FieldRef,
) -> Result<Box<dyn Aggregator>> {
    let input = args.first().map(|f| f.data_type().clone());
    let unsupported = || {
        plan_err!(
            "{} over {} in a GROUP BY over a stream or a changelog is not supported",
            name.to_ascii_uppercase(),
            input
                .as_ref()
                .map_or("no argument".to_owned(), ToString::to_string)
        )
    };
    match (name, &input) {
        ("count", _) => Ok(Box::new(Count::default())),
        ("sum", Some(DataType::Int64)) => Ok(Box::new(Sum::<Int64Type>::new(output.data_type()))),
        ("sum", Some(DataType::UInt64)) => Ok(Box::new(Sum::<UInt64Type>::new(output.data_type()))),
        ("sum", Some(DataType::Float64)) => {
            Ok(Box::new(Sum::<Float64Type>::new(output.data_type())))
        }
        ("sum", Some(DataType::Decimal128(..))) => {
            Ok(Box::new(Sum::<Decimal128Type>::new(output.data_type())))
        }
        ("avg", Some(DataType::Float64)) if output.data_type() == &DataType::Float64 => {
            Ok(Box::new(Average {
                sums: Sum::new(&DataType::Float64),
            }))
        }
        ("min" | "max", Some(data_type)) => Ok(Box::new(Extreme::new(name == "max", data_type)?)),
        _ => unsupported(),
    }
}

/// Makes room for `total` groups (never fewer: a caller may name only the groups it folds).
fn grow<T: Clone>(values: &mut Vec<T>, total: usize, empty: T) {
    if values.len() < total {
        values.resize(total, empty);
    }
}

/// Whether every argument of `row` is set (COUNT(x) counts non-NULL values).
fn all_valid(args: &[ArrayRef], row: usize) -> bool {
    args.iter().all(|a| a.is_valid(row))
}

/// The signed change a row makes: +1 added, -1 taken back, 0 neither.
#[inline]
fn change(add: &BooleanArray, retract: &BooleanArray, row: usize) -> i64 {
    i64::from(add.value(row)) - i64::from(retract.value(row))
}

#[derive(Default)]
struct Count {
    counts: Vec<i64>,
}

impl Aggregator for Count {
    fn fold(
        &mut self,
        args: &[ArrayRef],
        groups: &[usize],
        add: &BooleanArray,
        retract: &BooleanArray,
        total_groups: usize,
        _rows: Option<&[u32]>,
    ) -> Result<()> {
        grow(&mut self.counts, total_groups, 0);
        for (row, &group) in groups.iter().enumerate() {
            if all_valid(args, row) {
                self.counts[group] += change(add, retract, row);
            }
        }
        Ok(())
    }

    fn evaluate(&mut self, groups: &[usize]) -> Result<ArrayRef> {
        let counts = groups
            .iter()
            .map(|&g| self.counts.get(g).copied().unwrap_or(0));
        Ok(Arc::new(Int64Array::from_iter_values(counts)))
    }

    fn merge(&mut self, into: usize, from: usize, total_groups: usize) -> Result<()> {
        grow(&mut self.counts, total_groups, 0);
        self.counts[into] += std::mem::take(&mut self.counts[from]);
        Ok(())
    }

    fn clear(&mut self, groups: &[usize]) {
        for &group in groups {
            if let Some(count) = self.counts.get_mut(group) {
                *count = 0;
            }
        }
    }

    fn save(&mut self, total_groups: usize) -> Result<ArrayRef> {
        grow(&mut self.counts, total_groups, 0);
        let counts = self.counts[..total_groups].iter().copied();
        Ok(Arc::new(Int64Array::from_iter_values(counts)))
    }

    fn restore(&mut self, saved: &ArrayRef, groups: &[usize], total_groups: usize) -> Result<()> {
        grow(&mut self.counts, total_groups, 0);
        let saved = saved::primitive::<Int64Type>(saved)?;
        for (&group, count) in groups.iter().zip(saved.values()) {
            self.counts[group] = *count;
        }
        Ok(())
    }
}

/// A sum and the number of values in it, per group.
struct Sum<T: ArrowPrimitiveType> {
    sums: Vec<T::Native>,
    counts: Vec<i64>,
    output: DataType,
}

impl<T: ArrowPrimitiveType> Sum<T> {
    fn new(output: &DataType) -> Self {
        Sum {
            sums: Vec::new(),
            counts: Vec::new(),
            output: output.clone(),
        }
    }
}

impl<T: ArrowPrimitiveType> Aggregator for Sum<T> {
    fn fold(
        &mut self,
        args: &[ArrayRef],
        groups: &[usize],
        add: &BooleanArray,
        retract: &BooleanArray,
        total_groups: usize,
        _rows: Option<&[u32]>,
    ) -> Result<()> {
        grow(&mut self.sums, total_groups, T::Native::ZERO);
        grow(&mut self.counts, total_groups, 0);
        let values = args[0].as_primitive::<T>();
        for (row, &group) in groups.iter().enumerate() {
            if values.is_null(row) {
                continue;
            }
            let value = values.value(row);
            if add.value(row) {
                self.sums[group] = self.sums[group].add_wrapping(value);
                self.counts[group] += 1;
            } else if retract.value(row) {
                self.sums[group] = self.sums[group].sub_wrapping(value);
                self.counts[group] -= 1;
            }
        }
        Ok(())
    }

    fn evaluate(&mut self, groups: &[usize]) -> Result<ArrayRef> {
        let sums = groups
            .iter()
            .map(|&g| (self.counts.get(g).copied().unwrap_or(0) > 0).then(|| self.sums[g]));
        let sums: PrimitiveArray<T> = sums.collect();
        Ok(Arc::new(sums.with_data_type(self.output.clone())))
    }

    fn merge(&mut self, into: usize, from: usize, total_groups: usize) -> Result<()> {
        grow(&mut self.sums, total_groups, T::Native::ZERO);
        grow(&mut self.counts, total_groups, 0);
        self.sums[into] = self.sums[into].add_wrapping(self.sums[from]);
        self.counts[into] += self.counts[from];
        self.clear(&[from]);
        Ok(())
    }

    fn clear(&mut self, groups: &[usize]) {
        for &group in groups {
            if group < self.sums.len() {
                self.sums[group] = T::Native::ZERO;
                self.counts[group] = 0;
            }
        }
    }

    /// `{sum, count}` per group.
    fn save(&mut self, total_groups: usize) -> Result<ArrayRef> {
        grow(&mut self.sums, total_groups, T::Native::ZERO);
        grow(&mut self.counts, total_groups, 0);
        let sums = PrimitiveArray::<T>::from_iter_values(self.sums[..total_groups].iter().copied());
        let counts = Int64Array::from_iter_values(self.counts[..total_groups].iter().copied());
        saved::pair(("sum", Arc::new(sums)), ("count", Arc::new(counts)))
    }

    fn restore(&mut self, saved: &ArrayRef, groups: &[usize], total_groups: usize) -> Result<()> {
        grow(&mut self.sums, total_groups, T::Native::ZERO);
        grow(&mut self.counts, total_groups, 0);
        let (sums, counts) = saved::columns_of(saved, "sums")?;
        let sums = saved::primitive::<T>(sums)?;
        let counts = saved::primitive::<Int64Type>(counts)?;
        for (row, &group) in groups.iter().enumerate() {
            self.sums[group] = sums.value(row);
            self.counts[group] = counts.value(row);
        }
        Ok(())
    }
}

/// AVG over DOUBLE (DataFusion casts integer arguments to it): a sum and a count per group.
struct Average {
    sums: Sum<Float64Type>,
}

impl Aggregator for Average {
    fn fold(
        &mut self,
        args: &[ArrayRef],
        groups: &[usize],
        add: &BooleanArray,
        retract: &BooleanArray,
        total_groups: usize,
        _rows: Option<&[u32]>,
    ) -> Result<()> {
        self.sums
            .fold(args, groups, add, retract, total_groups, None)
    }

    fn evaluate(&mut self, groups: &[usize]) -> Result<ArrayRef> {
        let sums = &self.sums;
        let averages = groups.iter().map(|&g| {
            let count = sums.counts.get(g).copied().unwrap_or(0);
            (count > 0).then(|| sums.sums[g] / count as f64)
        });
        Ok(Arc::new(averages.collect::<PrimitiveArray<Float64Type>>()))
    }

    fn merge(&mut self, into: usize, from: usize, total_groups: usize) -> Result<()> {
        self.sums.merge(into, from, total_groups)
    }

    fn clear(&mut self, groups: &[usize]) {
        self.sums.clear(groups);
    }

    fn save(&mut self, total_groups: usize) -> Result<ArrayRef> {
        self.sums.save(total_groups)
    }

    fn restore(&mut self, saved: &ArrayRef, groups: &[usize], total_groups: usize) -> Result<()> {
        self.sums.restore(saved, groups, total_groups)
    }
}

/// MIN or MAX: every value of a group with its multiplicity, in Arrow's row format (which
/// orders as the values do), so any type that orders works.
struct Extreme {
    max: bool,
    converter: RowConverter,
    values: Vec<BTreeMap<OwnedRow, i64>>,
    /// The row of NULL: the result of a group without values.
    null: OwnedRow,
}

impl Extreme {
    fn new(max: bool, data_type: &DataType) -> Result<Self> {
        let converter = RowConverter::new(vec![SortField::new(data_type.clone())])?;
        let null = converter
            .convert_columns(&[new_null_array(data_type, 1)])?
            .row(0)
            .owned();
        Ok(Extreme {
            max,
            converter,
            values: Vec::new(),
            null,
        })
    }
}

impl Aggregator for Extreme {
    fn fold(
        &mut self,
        args: &[ArrayRef],
        groups: &[usize],
        add: &BooleanArray,
        retract: &BooleanArray,
        total_groups: usize,
        _rows: Option<&[u32]>,
    ) -> Result<()> {
        if self.values.len() < total_groups {
            self.values.resize_with(total_groups, BTreeMap::new);
        }
        let rows = self.converter.convert_columns(&args[..1])?;
        for (row, &group) in groups.iter().enumerate() {
            let change = change(add, retract, row);
            if change == 0 || args[0].is_null(row) {
                continue;
            }
            let values = &mut self.values[group];
            let value = rows.row(row).owned();
            if change > 0 {
                *values.entry(value).or_insert(0) += 1;
            } else if let Some(count) = values.get_mut(&value) {
                // Flink ignores taking back a value it never saw.
                *count -= 1;
                if *count == 0 {
                    values.remove(&value);
                }
            }
        }
        Ok(())
    }

    fn evaluate(&mut self, groups: &[usize]) -> Result<ArrayRef> {
        let rows = groups.iter().map(|&g| {
            let values = self.values.get(g);
            let extreme = values.and_then(|v| {
                if self.max {
                    v.last_key_value()
                } else {
                    v.first_key_value()
                }
            });
            extreme.map_or(self.null.row(), |(value, _)| value.row())
        });
        let mut columns = self.converter.convert_rows(rows)?;
        Ok(columns.swap_remove(0))
    }

    fn merge(&mut self, into: usize, from: usize, total_groups: usize) -> Result<()> {
        if self.values.len() < total_groups {
            self.values.resize_with(total_groups, BTreeMap::new);
        }
        for (value, count) in std::mem::take(&mut self.values[from]) {
            *self.values[into].entry(value).or_insert(0) += count;
        }
        Ok(())
    }

    fn clear(&mut self, groups: &[usize]) {
        for &group in groups {
            if let Some(values) = self.values.get_mut(group) {
                values.clear();
            }
        }
    }

    /// Per group its values (Arrow's row format) with their multiplicities, encoded.
    fn save(&mut self, total_groups: usize) -> Result<ArrayRef> {
        if self.values.len() < total_groups {
            self.values.resize_with(total_groups, BTreeMap::new);
        }
        let mut saved = BinaryBuilder::with_capacity(total_groups, total_groups * 16);
        for values in &self.values[..total_groups] {
            value_counts::append(&mut saved, values.iter().map(|(v, &n)| (v.as_ref(), n)))?;
        }
        Ok(Arc::new(saved.finish()))
    }

    fn restore(&mut self, saved: &ArrayRef, groups: &[usize], total_groups: usize) -> Result<()> {
        if self.values.len() < total_groups {
            self.values.resize_with(total_groups, BTreeMap::new);
        }
        let saved = value_counts::array(saved)?;
        let parser = self.converter.parser();
        for (row, &group) in groups.iter().enumerate() {
            self.values[group] = value_counts::read(saved, row)?
                .iter()
                .map(|(value, count)| (parser.parse(value).owned(), *count))
                .collect();
        }
        Ok(())
    }
}
