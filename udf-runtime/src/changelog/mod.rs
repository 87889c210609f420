//! Row kinds: how a changelog travels through a plan.
//!
//! Flink tags every row with a kind: `+I` (insert), `-U` (the row before an update), `+U`
//! (the row after it) and `-D` (delete). DataFusion has no such tag, so here a changelog is
//! a relation with one more column, `op` (`Utf8`, never NULL, one of the four short forms),
//! whose Arrow field carries the metadata key [`ROW_KIND_METADATA`]. The metadata, not the
//! name, marks the column: a user's own column called `op` is an ordinary column.
//!
//! A relation with that column is *updating*; one without it is *insert-only*. The analyzer
//! rule in [`modes`] keeps the column on every projection above an updating relation, turns
//! a GROUP BY over a stream or a changelog into the updating aggregate, and refuses every
//! operator that would read an updating input as if it were insert-only.

mod apply;
pub mod debezium;
mod insert_kinds;
pub(crate) mod modes;

pub use apply::materialize;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::common::{DFSchema, Result, exec_err};
use udf_core::RowKind;

/// The name of the row-kind column.
pub const OP_COLUMN: &str = "op";

/// The field metadata key that marks the row-kind column.
pub const ROW_KIND_METADATA: &str = "udf.row_kind";

/// The row-kind column's field: `op STRING NOT NULL`, marked.
pub fn row_kind_field() -> Field {
    Field::new(OP_COLUMN, DataType::Utf8, false).with_metadata(HashMap::from([(
        ROW_KIND_METADATA.to_owned(),
        "true".to_owned(),
    )]))
}

/// Whether `field` is a row-kind column.
pub fn is_row_kind(field: &Field) -> bool {
    field.metadata().contains_key(ROW_KIND_METADATA)
}

/// The position of the row-kind column of an Arrow schema.
pub fn row_kind_index(schema: &Schema) -> Option<usize> {
    schema.fields().iter().position(|f| is_row_kind(f))
}

/// The position of the row-kind column of a logical schema: `Some` for an updating relation.
pub fn row_kind_column(schema: &DFSchema) -> Option<usize> {
    schema.fields().iter().position(|f| is_row_kind(f))
}

/// `schema` with the row-kind column appended: the schema of a changelog of those columns.
pub fn with_row_kind(schema: &Schema) -> Schema {
    let mut fields: Vec<FieldRef> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(row_kind_field()));
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// The kind of one short form.
pub fn parse_kind(short: &str) -> Option<RowKind> {
    match short {
        "+I" => Some(RowKind::Insert),
        "-U" => Some(RowKind::UpdateBefore),
        "+U" => Some(RowKind::UpdateAfter),
        "-D" => Some(RowKind::Delete),
        _ => None,
    }
}

/// Reads a row-kind column. An error names the row and value that are not a row kind;
/// `what` says where the column comes from.
pub fn kinds(column: &ArrayRef, what: &str) -> Result<Vec<RowKind>> {
    let Some(shorts) = column.as_string_opt::<i32>() else {
        return exec_err!(
            "the row kinds of {what} are {}, not STRING",
            column.data_type()
        );
    };
    let mut kinds = Vec::with_capacity(shorts.len());
    for row in 0..shorts.len() {
        let short = shorts.is_valid(row).then(|| shorts.value(row));
        match short.and_then(parse_kind) {
            Some(kind) => kinds.push(kind),
            None => {
                return exec_err!(
                    "row {row} of {what} has row kind {}, not one of +I, -U, +U, -D",
                    short.map_or("NULL".to_owned(), |k| format!("`{k}`"))
                );
            }
        }
    }
    Ok(kinds)
}

/// For each row of a row-kind column, whether it takes back (`-U`, `-D`) rather than adds
/// (`+I`, `+U`); errors as [`kinds`].
pub fn retractions(column: &ArrayRef, what: &str) -> Result<Vec<bool>> {
    Ok(kinds(column, what)?
        .into_iter()
        .map(|kind| !kind.is_addition())
        .collect())
}

/// A row-kind column of the given kinds (every short form is two bytes: the offsets are
/// known without looking at the values).
pub fn kinds_array(kinds: &[RowKind]) -> ArrayRef {
    // Each short form as the two bytes of one `u16` in memory order: one store per row.
    let values: Vec<u16> = kinds
        .iter()
        .map(|kind| {
            u16::from_ne_bytes(match kind {
                RowKind::Insert => *b"+I",
                RowKind::UpdateBefore => *b"-U",
                RowKind::UpdateAfter => *b"+U",
                RowKind::Delete => *b"-D",
            })
        })
        .collect();
    // SAFETY: every string is two ASCII bytes and the offsets are 0, 2, 4, ..: each slice
    // is valid UTF-8 (checking it took a few percent of an updating GROUP BY's time).
    let kinds = unsafe {
        StringArray::new_unchecked(
            two_byte_offsets(kinds.len()),
            Buffer::from_vec(values),
            None,
        )
    };
    Arc::new(kinds)
}

/// The offsets `0, 2, 4, ..` of `len` two-byte strings: a slice of one shared buffer for
/// batches of common sizes, built per batch only for larger ones.
fn two_byte_offsets(len: usize) -> OffsetBuffer<i32> {
    const SHARED: usize = 1 << 16;
    static OFFSETS: OnceLock<OffsetBuffer<i32>> = OnceLock::new();
    if len > SHARED {
        return OffsetBuffer::new(ScalarBuffer::from_iter((0..=len as i32).map(|i| i * 2)));
    }
    OFFSETS
        .get_or_init(|| {
            OffsetBuffer::new(ScalarBuffer::from_iter((0..=SHARED as i32).map(|i| i * 2)))
        })
        .slice(0, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [RowKind; 4] = [
        RowKind::Insert,
        RowKind::UpdateBefore,
        RowKind::UpdateAfter,
        RowKind::Delete,
    ];

    #[test]
    fn a_kinds_column_reads_back_as_the_kinds_it_was_made_of() {
        let kinds: Vec<RowKind> = ALL.iter().cycle().take(11).copied().collect();
        let column = kinds_array(&kinds);
        // Built without checking: a full check finds it valid UTF-8 at every offset.
        column.to_data().validate_full().unwrap();
        assert_eq!(super::kinds(&column, "a test").unwrap(), kinds);
        let shorts: Vec<&str> = column.as_string::<i32>().iter().flatten().collect();
        let expected: Vec<&str> = kinds.iter().map(|k| k.short()).collect();
        assert_eq!(shorts, expected);
    }

    #[test]
    fn a_kinds_column_longer_than_the_shared_offsets_is_whole() {
        let kinds = vec![RowKind::Delete; (1 << 16) + 3];
        let column = kinds_array(&kinds);
        assert_eq!(column.len(), kinds.len());
        assert_eq!(super::kinds(&column, "a test").unwrap(), kinds);
        assert!(kinds_array(&[]).is_empty());
    }
}
