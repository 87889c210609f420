//! Collectors: how functions that emit rows (table aggregates, and later table functions and
//! PTFs) hand them over. Rows go straight into Arrow builders; nothing is boxed per row.

use arrow::array::ArrayRef;

use crate::Error;
use crate::convert::{ResultValue, ValueBuilder};
use crate::types::DataType;

/// The kind of a changelog row (Flink's `RowKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowKind {
    /// `+I`
    Insert,
    /// `-U`
    UpdateBefore,
    /// `+U`
    UpdateAfter,
    /// `-D`
    Delete,
}

impl RowKind {
    /// Flink's short form: `+I`, `-U`, `+U`, `-D`.
    pub fn short(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }

    /// Whether the row adds to the result (`+I`, `+U`) rather than removing from it.
    pub fn is_addition(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }
}

/// Rows emitted by a function, with the group (or input row) and kind of each.
pub struct Emitted<T: ResultValue> {
    builder: T::Builder,
    /// For each emitted row: the group it belongs to.
    pub owners: Vec<usize>,
    /// For each emitted row: its kind.
    pub kinds: Vec<RowKind>,
    error: Option<Error>,
}

impl<T: ResultValue> Emitted<T> {
    /// A buffer for rows of SQL type `row_type`.
    pub fn new(row_type: &DataType, capacity: usize) -> Result<Self, Error> {
        Ok(Emitted {
            builder: T::builder(row_type, capacity)?,
            owners: Vec::with_capacity(capacity),
            kinds: Vec::with_capacity(capacity),
            error: None,
        })
    }

    #[inline]
    fn push(&mut self, row: T, owner: usize, kind: RowKind) {
        if self.error.is_some() {
            return;
        }
        match self.builder.append(row) {
            Ok(()) => {
                self.owners.push(owner);
                self.kinds.push(kind);
            }
            Err(error) => self.error = Some(error),
        }
    }

    /// A collector that adds rows for `owner`.
    #[inline]
    pub fn collector(&mut self, owner: usize) -> Collector<'_, T> {
        Collector {
            emitted: self,
            owner,
            kind: RowKind::Insert,
        }
    }

    /// A collector that adds rows for `owner` as `kind` (e.g. `-D` to take back earlier ones).
    pub fn collector_of_kind(&mut self, owner: usize, kind: RowKind) -> Collector<'_, T> {
        Collector {
            emitted: self,
            owner,
            kind,
        }
    }

    /// A collector that adds (`+I`) and retracts (`-D`) rows for `owner`.
    pub fn retractable(&mut self, owner: usize) -> RetractableCollector<'_, T> {
        RetractableCollector {
            emitted: self,
            owner,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.owners.len()
    }

    pub fn is_empty(&self) -> bool {
        self.owners.is_empty()
    }

    /// The first error a row caused (a value that does not fit the declared type).
    #[inline]
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    /// The emitted rows as one column of the row type; owners and kinds are drained too.
    pub fn finish(&mut self) -> Result<(ArrayRef, Vec<usize>, Vec<RowKind>), Error> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        let column = self.builder.finish()?;
        Ok((
            column,
            std::mem::take(&mut self.owners),
            std::mem::take(&mut self.kinds),
        ))
    }
}

/// Where a function emits its rows (Flink's `Collector<T>`).
pub struct Collector<'a, T: ResultValue> {
    emitted: &'a mut Emitted<T>,
    owner: usize,
    kind: RowKind,
}

impl<T: ResultValue> Collector<'_, T> {
    /// Emits one row. A value that does not fit the declared type fails the query after the
    /// call returns.
    #[inline]
    pub fn collect(&mut self, row: T) {
        self.emitted.push(row, self.owner, self.kind);
    }
}

/// A collector that can also take back rows it emitted earlier (Flink's
/// `RetractableCollector<T>`, for `emit_update_with_retract`).
pub struct RetractableCollector<'a, T: ResultValue> {
    emitted: &'a mut Emitted<T>,
    owner: usize,
}

impl<T: ResultValue> RetractableCollector<'_, T> {
    /// Emits one row (`+I`).
    pub fn collect(&mut self, row: T) {
        self.emitted.push(row, self.owner, RowKind::Insert);
    }

    /// Takes back a row emitted earlier (`-D`).
    pub fn retract(&mut self, row: T) {
        self.emitted.push(row, self.owner, RowKind::Delete);
    }
}
