//! How MIN/MAX and DISTINCT save their values in a checkpoint: per group, each value (in
//! Arrow's row format) with the number of rows that hold it, encoded as one binary value.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryArray, BinaryBuilder};
use datafusion::common::{Result, exec_datafusion_err, exec_err};

/// Appends one group's values and counts to `saved`.
pub(super) fn append<'a>(
    saved: &mut BinaryBuilder,
    values: impl Iterator<Item = (&'a [u8], i64)>,
) -> Result<()> {
    let values: Vec<(&[u8], i64)> = values.collect();
    let bytes = postcard::to_stdvec(&values)
        .map_err(|e| exec_datafusion_err!("saved values do not encode: {e}"))?;
    saved.append_value(bytes);
    Ok(())
}

/// `saved` as the binary array `append` filled.
pub(super) fn array(saved: &ArrayRef) -> Result<&BinaryArray> {
    match saved.as_binary_opt::<i32>() {
        Some(saved) => Ok(saved),
        None => exec_err!("saved values arrive as {}, not BINARY", saved.data_type()),
    }
}

/// The values and counts of the group at `row` of `saved`.
pub(super) fn read(saved: &BinaryArray, row: usize) -> Result<Vec<(Vec<u8>, i64)>> {
    postcard::from_bytes(saved.value(row))
        .map_err(|e| exec_datafusion_err!("saved values do not read: {e}"))
}
