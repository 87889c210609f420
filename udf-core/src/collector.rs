//! Collectors: how functions that emit rows (table aggregates, and later table functions and
//! PTFs) hand them over. Rows go straight into Arrow builders; nothing is boxed per row.

use arrow::array::ArrayRef;

use crate::Error;
use crate::convert::{ResultValue, StrBuilder, ValueBuilder};
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

/// Which input row (or group) emitted each row of a chunk. Owners never decrease. The common
/// case — one row per owner, in order, as a PTF counting rows emits — is kept as a range, so
/// nothing is written per row for it and the runtime can slice instead of gathering.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Owners {
    /// Every owner, once the owners stopped being a range; empty while they are one.
    listed: Vec<usize>,
    /// While `listed` is empty: the owners are `first..first + len`.
    first: usize,
    len: usize,
}

impl Owners {
    /// The owners `list` (each row's owner, in order).
    pub fn from_list(list: Vec<usize>) -> Self {
        Owners {
            len: list.len(),
            listed: list,
            first: 0,
        }
    }

    #[inline]
    fn push(&mut self, owner: usize) {
        if self.listed.is_empty() {
            if self.len == 0 {
                self.first = owner;
                self.len = 1;
                return;
            }
            if owner == self.first + self.len {
                self.len += 1;
                return;
            }
            self.listed.reserve(self.len + 1);
            self.listed.extend(self.first..self.first + self.len);
        }
        self.listed.push(owner);
        self.len += 1;
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The owners as a range, when each row has the next owner.
    pub fn range(&self) -> Option<std::ops::Range<usize>> {
        (self.listed.is_empty()).then_some(self.first..self.first + self.len)
    }

    /// The owner of row `row`.
    pub fn get(&self, row: usize) -> usize {
        match self.range() {
            Some(range) => range.start + row,
            None => self.listed[row],
        }
    }

    /// Each row's owner, in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let range = self.range().unwrap_or(0..0);
        range.chain(self.listed.iter().copied())
    }

    /// Each row's owner, in order, as a vector.
    pub fn into_vec(self) -> Vec<usize> {
        match self.range() {
            Some(range) => range.collect(),
            None => self.listed,
        }
    }
}

/// Rows emitted by a function, with the group (or input row) and kind of each.
pub struct Emitted<T: ResultValue> {
    builder: T::Builder,
    owners: Owners,
    /// Each row's kind, once a row was not `+I`; empty while every row is.
    kinds: Vec<RowKind>,
    error: Option<Error>,
}

impl<T: ResultValue> Emitted<T> {
    /// A buffer for rows of SQL type `row_type`.
    pub fn new(row_type: &DataType, capacity: usize) -> Result<Self, Error> {
        Ok(Emitted {
            builder: T::builder(row_type, capacity)?,
            owners: Owners::default(),
            kinds: Vec::new(),
            error: None,
        })
    }

    #[inline]
    fn push(&mut self, row: T, owner: usize, kind: RowKind) {
        self.push_with(owner, kind, |builder| builder.append(row));
    }

    /// Adds the row that `append` writes into the builder.
    #[inline]
    fn push_with(
        &mut self,
        owner: usize,
        kind: RowKind,
        append: impl FnOnce(&mut T::Builder) -> Result<(), Error>,
    ) {
        if self.error.is_some() {
            return;
        }
        match append(&mut self.builder) {
            Ok(()) => {
                if kind != RowKind::Insert || !self.kinds.is_empty() {
                    self.kinds.resize(self.owners.len(), RowKind::Insert);
                    self.kinds.push(kind);
                }
                self.owners.push(owner);
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
        // Looked at once per row: only read, unless there is one.
        self.error.as_ref()?;
        self.error.take()
    }

    /// The emitted rows as one column of the row type, and their owners; the buffer is empty
    /// afterwards.
    pub fn finish_rows(&mut self) -> Result<(ArrayRef, Owners), Error> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        let column = self.builder.finish()?;
        self.kinds.clear();
        Ok((column, std::mem::take(&mut self.owners)))
    }

    /// The emitted rows as one column of the row type, with each row's owner and kind.
    pub fn finish(&mut self) -> Result<(ArrayRef, Vec<usize>, Vec<RowKind>), Error> {
        let mut kinds = std::mem::take(&mut self.kinds);
        let (column, owners) = self.finish_rows()?;
        kinds.resize(owners.len(), RowKind::Insert);
        Ok((column, owners.into_vec(), kinds))
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

impl<T: ResultValue<Builder = StrBuilder>> Collector<'_, T> {
    /// Emits one string row formatted straight into the output column:
    /// `out.collect_fmt(format_args!("paid {amount}"))` is `out.collect(format!("paid {amount}"))`
    /// without a `String` allocated, copied and freed per row.
    #[inline]
    pub fn collect_fmt(&mut self, row: std::fmt::Arguments<'_>) {
        self.emitted
            .push_with(self.owner, self.kind, |builder| builder.append_fmt(row));
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

#[cfg(test)]
mod tests {
    use std::fmt;

    use arrow::array::{Array, AsArray};

    use super::*;

    /// The emitted rows as strings, and their owners.
    fn finish(emitted: &mut Emitted<String>) -> Result<(Vec<String>, Vec<usize>), Error> {
        let (column, owners) = emitted.finish_rows()?;
        let column = column.as_string::<i32>();
        let values = (0..column.len()).map(|i| column.value(i).to_owned());
        Ok((values.collect(), owners.into_vec()))
    }

    #[test]
    fn formatted_rows_equal_collected_strings_and_keep_their_owners() {
        let mut formatted = Emitted::<String>::new(&DataType::string(), 4).unwrap();
        let mut collected = Emitted::<String>::new(&DataType::string(), 4).unwrap();
        for (owner, amount) in [(0, 12), (0, -3), (2, 7)] {
            formatted
                .collector(owner)
                .collect_fmt(format_args!("paid {amount} of {}", amount * 2));
            collected
                .collector(owner)
                .collect(format!("paid {amount} of {}", amount * 2));
        }
        formatted
            .collector(3)
            .collect_fmt(format_args!("no arguments"));
        collected.collector(3).collect("no arguments".to_owned());
        let (values, owners) = finish(&mut formatted).unwrap();
        assert_eq!(owners, vec![0, 0, 2, 3]);
        assert_eq!(values, finish(&mut collected).unwrap().0);
        assert_eq!(values[1], "paid -3 of -6");
    }

    struct Failing;

    impl fmt::Display for Failing {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("half")?;
            Err(fmt::Error)
        }
    }

    #[test]
    fn a_failing_display_is_an_error_not_a_row_glued_to_the_next() {
        let mut emitted = Emitted::<String>::new(&DataType::string(), 2).unwrap();
        emitted.collector(0).collect_fmt(format_args!("{Failing}"));
        emitted.collector(1).collect_fmt(format_args!("next"));
        let error = finish(&mut emitted).unwrap_err();
        assert!(error.to_string().contains("`Display`"), "{error}");
    }
}
