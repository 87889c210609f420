//! Batch-level helpers for generated dispatch: vectorized kernels for primitive functions
//! and the combined validity of strict arguments.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, PrimitiveArray, new_null_array};
use arrow::buffer::NullBuffer;
use arrow::compute::kernels::arity;
use arrow::error::ArrowError;

use crate::Error;
use crate::convert::PrimitiveValue;
use crate::scalar::ArgColumn;
use crate::types::DataType;

fn primitive<T: PrimitiveValue>(column: &ArgColumn) -> Result<&PrimitiveArray<T::Arrow>, Error> {
    column
        .values()
        .as_any()
        .downcast_ref::<PrimitiveArray<T::Arrow>>()
        .ok_or_else(|| {
            Error::msg(format!(
                "cannot read Arrow {} values as `{}`",
                column.values().data_type(),
                std::any::type_name::<T>()
            ))
        })
}

fn all_null(output: &DataType, rows: usize) -> ArrayRef {
    new_null_array(&output.to_arrow(), rows)
}

/// `f` over a primitive column; NULL stays NULL and `f` never sees it.
pub fn unary<A, R>(
    a: &ArgColumn,
    rows: usize,
    output: &DataType,
    f: impl Fn(A) -> R,
) -> Result<ArrayRef, Error>
where
    A: PrimitiveValue,
    R: PrimitiveValue,
{
    let values = primitive::<A>(a)?;
    if a.is_scalar() {
        if values.is_null(0) {
            return Ok(all_null(output, rows));
        }
        // One call per row: the caller passes a single row when one result may stand for all.
        let v = values.value(0);
        return Ok(Arc::new(PrimitiveArray::<R::Arrow>::from_iter_values(
            (0..rows).map(|_| f(v)),
        )));
    }
    Ok(Arc::new(apply_unary(values, f)))
}

fn apply_unary<A: PrimitiveValue, R: PrimitiveValue>(
    values: &PrimitiveArray<A::Arrow>,
    f: impl Fn(A) -> R,
) -> PrimitiveArray<R::Arrow> {
    if values.null_count() == 0 {
        arity::unary(values, f)
    } else {
        // Only valid slots are evaluated: a strict function is not called for NULL.
        arity::try_unary(values, |v| Ok::<_, ArrowError>(f(v))).expect("infallible")
    }
}

/// `f` over two primitive columns (either may be a constant); NULL in either gives NULL.
pub fn binary<A, B, R>(
    a: &ArgColumn,
    b: &ArgColumn,
    rows: usize,
    output: &DataType,
    f: impl Fn(A, B) -> R,
) -> Result<ArrayRef, Error>
where
    A: PrimitiveValue,
    B: PrimitiveValue,
    R: PrimitiveValue,
{
    let (left, right) = (primitive::<A>(a)?, primitive::<B>(b)?);
    let result = match (a.is_scalar(), b.is_scalar()) {
        (true, _) if left.is_null(0) => return Ok(all_null(output, rows)),
        (_, true) if right.is_null(0) => return Ok(all_null(output, rows)),
        (true, true) => {
            let (x, y) = (left.value(0), right.value(0));
            PrimitiveArray::<R::Arrow>::from_iter_values((0..rows).map(|_| f(x, y)))
        }
        (true, false) => {
            let x = left.value(0);
            apply_unary(right, |y| f(x, y))
        }
        (false, true) => {
            let y = right.value(0);
            apply_unary(left, |x| f(x, y))
        }
        (false, false) if left.null_count() == 0 && right.null_count() == 0 => {
            arity::binary(left, right, f)?
        }
        (false, false) => arity::try_binary(left, right, |x, y| Ok::<_, ArrowError>(f(x, y)))?,
    };
    Ok(Arc::new(result))
}

/// Which rows have a non-NULL value in every strict argument.
pub enum Validity {
    /// No strict argument holds NULL.
    AllValid,
    /// A constant strict argument is NULL: every result is NULL.
    AllNull,
    Mask(NullBuffer),
}

impl Validity {
    /// The combined validity of the columns flagged strict (parameters that are not `Option`).
    pub fn of<'a>(columns: impl IntoIterator<Item = (&'a ArgColumn, bool)>) -> Validity {
        let mut mask: Option<NullBuffer> = None;
        for (column, strict) in columns {
            if !strict {
                continue;
            }
            if column.is_scalar() {
                if column.values().is_null(0) {
                    return Validity::AllNull;
                }
            } else if let Some(nulls) = column.values().nulls() {
                mask = NullBuffer::union(mask.as_ref(), Some(nulls));
            }
        }
        match mask {
            Some(mask) if mask.null_count() > 0 => Validity::Mask(mask),
            _ => Validity::AllValid,
        }
    }

    #[inline]
    pub fn is_valid(&self, row: usize) -> bool {
        match self {
            Validity::AllValid => true,
            Validity::AllNull => false,
            Validity::Mask(mask) => mask.is_valid(row),
        }
    }

    pub fn is_all_null(&self) -> bool {
        matches!(self, Validity::AllNull)
    }
}

/// The result of a batch whose strict arguments are all NULL.
pub fn null_result(output: &DataType, rows: usize) -> ArrayRef {
    all_null(output, rows)
}
