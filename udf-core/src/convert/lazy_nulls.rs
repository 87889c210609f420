//! The NULLs of values being built, kept by a builder that counts its values itself.

use arrow::array::BooleanBufferBuilder;
use arrow::buffer::NullBuffer;

/// Which values are valid, as Arrow's `NullBufferBuilder` keeps it, but without a length of
/// its own: the builder passes its count when a NULL comes. While no value is NULL nothing
/// is written per value (a bitmap is made at the first NULL), so a row loop appending valid
/// values carries no counter for it.
#[derive(Debug, Default)]
pub struct LazyNulls {
    bits: Option<BooleanBufferBuilder>,
    /// The values expected (the bitmap's first size).
    capacity: usize,
}

impl LazyNulls {
    pub fn new(capacity: usize) -> Self {
        LazyNulls {
            bits: None,
            capacity,
        }
    }

    #[inline(always)]
    pub fn append_valid(&mut self) {
        if let Some(bits) = &mut self.bits {
            bits.append(true);
        }
    }

    /// Appends a NULL after `before` values.
    #[inline]
    pub fn append_null(&mut self, before: usize) {
        let capacity = self.capacity;
        self.bits
            .get_or_insert_with(|| {
                let mut bits = BooleanBufferBuilder::new(capacity.max(before + 1));
                bits.append_n(before, true);
                bits
            })
            .append(false);
    }

    /// The NULLs of the values so far (none without a NULL); empty afterwards.
    pub fn finish(&mut self) -> Option<NullBuffer> {
        self.bits
            .take()
            .map(|mut bits| NullBuffer::new(bits.finish()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bitmap_only_once_a_null_came() {
        let mut nulls = LazyNulls::new(2);
        nulls.append_valid();
        nulls.append_valid();
        assert!(nulls.finish().is_none());
        nulls.append_valid();
        nulls.append_null(1);
        nulls.append_valid();
        let bitmap = nulls.finish().expect("a NULL came");
        assert_eq!(bitmap.len(), 3);
        assert_eq!(
            (0..3).map(|i| bitmap.is_valid(i)).collect::<Vec<_>>(),
            [true, false, true]
        );
        assert!(nulls.finish().is_none());
    }
}
