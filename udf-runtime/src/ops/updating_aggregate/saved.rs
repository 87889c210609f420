//! The shapes the built-in aggregators save their accumulators in: a primitive column, or
//! two columns side by side in a struct. Reading one back checks its shape, since a
//! snapshot of another build or query may hold another.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, ArrowPrimitiveType, AsArray, PrimitiveArray, StructArray,
};
use datafusion::arrow::datatypes::Field;
use datafusion::common::{Result, exec_datafusion_err};

/// `saved` as the primitive array a `save` made.
pub(super) fn primitive<T: ArrowPrimitiveType>(saved: &ArrayRef) -> Result<&PrimitiveArray<T>> {
    saved.as_primitive_opt::<T>().ok_or_else(|| {
        exec_datafusion_err!(
            "saved accumulators arrive as {}, not {}",
            saved.data_type(),
            T::DATA_TYPE
        )
    })
}

/// Two columns of one length as one struct column; the second may hold NULLs.
pub(super) fn pair(first: (&str, ArrayRef), second: (&str, ArrayRef)) -> Result<ArrayRef> {
    let fields = vec![
        Field::new(first.0, first.1.data_type().clone(), false),
        Field::new(second.0, second.1.data_type().clone(), true),
    ];
    Ok(Arc::new(StructArray::try_new(
        fields.into(),
        vec![first.1, second.1],
        None,
    )?))
}

/// The two columns of a struct that [`pair`] made; `what` names them in the error.
pub(super) fn columns_of<'a>(
    saved: &'a ArrayRef,
    what: &str,
) -> Result<(&'a ArrayRef, &'a ArrayRef)> {
    match saved.as_struct_opt() {
        Some(pair) if pair.num_columns() == 2 => Ok((pair.column(0), pair.column(1))),
        _ => Err(exec_datafusion_err!(
            "saved {what} arrive as {}",
            saved.data_type()
        )),
    }
}
