//! The watermarks a processor has received: one per input partition, combined by minimum
//! (rule 25 of docs/semantics.md). An input partition that ends has watermark +∞.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceWatermarks {
    /// Each input partition's watermark (`None` until it reports one).
    sources: Vec<Option<i64>>,
    /// Input partitions that have ended.
    ended: usize,
}

impl SourceWatermarks {
    pub fn new(sources: usize) -> Self {
        SourceWatermarks {
            sources: vec![None; sources],
            ended: 0,
        }
    }

    /// The processor's watermark: the minimum over its input partitions, once every one has
    /// reported.
    pub fn current(&self) -> Option<i64> {
        self.sources
            .iter()
            .try_fold(i64::MAX, |min, w| w.map(|w| min.min(w)))
    }

    /// The minimum over `sources` (the partitions of one table argument), once each has
    /// reported.
    pub fn current_of(&self, sources: std::ops::Range<usize>) -> Option<i64> {
        self.sources[sources]
            .iter()
            .try_fold(i64::MAX, |min, w| w.map(|w| min.min(w)))
    }

    /// Moves `source`'s watermark forward (never back).
    pub fn advance(&mut self, source: usize, watermark: i64) {
        let current = &mut self.sources[source];
        *current = Some(current.map_or(watermark, |c| c.max(watermark)));
    }

    /// Moves each source's watermark forward to `saved`'s (a restored checkpoint's).
    pub fn advance_to(&mut self, saved: &SourceWatermarks) {
        for (source, watermark) in saved.sources.iter().enumerate() {
            if let Some(watermark) = watermark {
                self.advance(source, *watermark);
            }
        }
    }

    /// `source` has no more rows.
    pub fn end(&mut self, source: usize) {
        self.advance(source, i64::MAX);
        self.ended += 1;
    }

    /// Whether every input partition has ended.
    pub fn all_ended(&self) -> bool {
        self.ended == self.sources.len()
    }

    pub fn sources(&self) -> usize {
        self.sources.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimum_once_every_source_reported_and_never_back() {
        let mut watermarks = SourceWatermarks::new(2);
        watermarks.advance(0, 10);
        assert_eq!(watermarks.current(), None);
        watermarks.advance(1, 5);
        assert_eq!(watermarks.current(), Some(5));
        watermarks.advance(1, 3);
        assert_eq!(
            watermarks.current(),
            Some(5),
            "a watermark never moves back"
        );
        watermarks.end(1);
        assert_eq!(watermarks.current(), Some(10));
        assert!(!watermarks.all_ended());
        watermarks.end(0);
        assert_eq!(watermarks.current(), Some(i64::MAX));
        assert!(watermarks.all_ended());
    }
}
