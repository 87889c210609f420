//! Index arrays over buffers an operator keeps from batch to batch. Arrow's `take` wants its
//! indices as an array, which owns its buffer; lending a vector to one and taking it back
//! after keeps a batch from allocating (and, with glibc, faulting in) a fresh one each time.

use datafusion::arrow::array::UInt32Array;

/// `indices` as an Arrow array, without copying; [`reclaim`] gives the buffer back.
pub(crate) fn lend(indices: &mut Vec<u32>) -> UInt32Array {
    UInt32Array::from(std::mem::take(indices))
}

/// The buffer of an array [`lend`] made, emptied for the next batch (a fresh one if the
/// array's buffer is shared).
pub(crate) fn reclaim(array: UInt32Array) -> Vec<u32> {
    let (_, values, _) = array.into_parts();
    let mut indices = values.into_inner().into_vec::<u32>().unwrap_or_default();
    indices.clear();
    indices
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lent_buffer_comes_back_with_its_capacity() {
        let mut indices = Vec::with_capacity(1024);
        indices.extend([3u32, 1, 2]);
        let pointer = indices.as_ptr();
        let array = lend(&mut indices);
        assert_eq!(array.values().as_ref(), &[3, 1, 2]);
        assert!(indices.is_empty());
        let back = reclaim(array);
        assert!(back.is_empty());
        assert_eq!(back.as_ptr(), pointer);
        assert!(back.capacity() >= 1024);
    }

    #[test]
    fn a_shared_buffer_is_not_taken_back() {
        let mut indices = vec![1u32, 2];
        let array = lend(&mut indices);
        let other = array.clone();
        let back = reclaim(array);
        // A fresh vector: the buffer stays with the array that still reads it.
        assert_eq!(back.capacity(), 0);
        assert_eq!(other.values().as_ref(), &[1, 2]);
    }
}
