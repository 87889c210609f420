//! Reading many store keys at once, in key order. A point read costs about 1.7 µs even with
//! every block cached (it searches each level's filter and index); a scan of a range costs
//! about 0.25 µs an entry. So keys that lie close together — keys arriving in the order they
//! were moved out, as integer keys counting up do — are read by scanning from the first to
//! the last, and keys far apart one by one. Which they are shows only while scanning: a scan
//! that passes many more entries than it wants is given up, the rest read one by one, and
//! scans are not tried again for a while (twice as long after each miss, up to a limit).

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::row::RowConverter;
use datafusion::common::Result;

use super::store::ProcessorStore;

/// Fewer keys than this are read one by one.
const SCAN_AT_LEAST: usize = 16;
/// A scan gives up once it passed this many entries beyond twice the keys it wants.
const SCAN_SLACK: usize = 64;
/// The most reads a failed scan makes one-by-one reads of, before scanning is tried again.
const MAX_BACKOFF: u32 = 64;

#[derive(Default)]
pub struct SortedReads {
    /// Reads to make one by one before a scan is tried again.
    backoff: u32,
    /// The backoff after the next failed scan.
    next_backoff: u32,
}

impl SortedReads {
    /// Reads `keys` (ascending, no key twice) from `store`, calling `found` with the position
    /// in `keys` and the value of each key the store holds. A key `maybe` says is certainly
    /// not there is not read one by one (a scan passes it for free).
    pub fn read(
        &mut self,
        store: &ProcessorStore,
        keys: &[&[u8]],
        maybe: impl Fn(usize) -> bool,
        mut found: impl FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut next = 0;
        if keys.len() >= SCAN_AT_LEAST && self.backoff == 0 {
            next = self.scan(store, keys, &mut found)?;
            if next == keys.len() {
                self.next_backoff = 1;
                return Ok(());
            }
            self.backoff = self.next_backoff;
            self.next_backoff = (self.next_backoff * 2).min(MAX_BACKOFF);
        } else {
            self.backoff = self.backoff.saturating_sub(1);
        }
        for (at, key) in keys.iter().enumerate().skip(next) {
            if !maybe(at) {
                continue;
            }
            if let Some(value) = store.get(key)? {
                found(at, &value)?;
            }
        }
        Ok(())
    }

    /// Reads the entries of `keys` (store keys in any order, no key twice) from `store` and
    /// parses their values, each one row of Arrow's row format, with `values`: the positions
    /// in `keys` of those found and their values as columns, or `None` when none is there.
    pub fn read_values(
        &mut self,
        store: &ProcessorStore,
        keys: &[&[u8]],
        values: &RowConverter,
    ) -> Result<Option<(Vec<usize>, Vec<ArrayRef>)>> {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_unstable_by(|&a, &b| keys[a].cmp(keys[b]));
        let sorted: Vec<&[u8]> = order.iter().map(|&at| keys[at]).collect();
        let (mut found, mut bytes, mut ends) = (Vec::new(), Vec::new(), Vec::new());
        self.read(
            store,
            &sorted,
            |_| true,
            |at, entry| {
                found.push(order[at]);
                bytes.extend_from_slice(entry);
                ends.push(bytes.len());
                Ok(())
            },
        )?;
        if found.is_empty() {
            return Ok(None);
        }
        let parser = values.parser();
        let entries = ends.iter().scan(0, |start, &end| {
            let entry = &bytes[*start..end];
            *start = end;
            Some(parser.parse(entry))
        });
        Ok(Some((found, values.convert_rows(entries)?)))
    }

    /// Scans from the first key to the last; how many keys it settled (all of them, unless
    /// it gave up).
    fn scan(
        &mut self,
        store: &ProcessorStore,
        keys: &[&[u8]],
        found: &mut impl FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<usize> {
        let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
            return Ok(0);
        };
        let allowance = 2 * keys.len() + SCAN_SLACK;
        let (mut next, mut passed) = (0, 0);
        for entry in store.range(first, last) {
            let (key, value) = entry?;
            // Keys before this entry are not in the store.
            while next < keys.len() && keys[next] < &*key {
                next += 1;
            }
            if next == keys.len() {
                break;
            }
            if keys[next] == &*key {
                found(next, &value)?;
                next += 1;
            } else {
                passed += 1;
                if passed > allowance {
                    return Ok(next);
                }
            }
        }
        Ok(keys.len())
    }
}

#[cfg(test)]
mod tests {
    use super::super::store::test_store;
    use super::*;

    fn key(i: u64) -> [u8; 9] {
        let mut key = [3; 9];
        key[1..].copy_from_slice(&i.to_be_bytes());
        key
    }

    /// Reads `wanted` (ascending), giving the found positions and values.
    fn read(reads: &mut SortedReads, store: &ProcessorStore, wanted: &[u64]) -> Vec<(usize, u64)> {
        let keys: Vec<[u8; 9]> = wanted.iter().map(|&i| key(i)).collect();
        let keys: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let mut found = Vec::new();
        reads
            .read(
                store,
                &keys,
                |_| true,
                |at, value| {
                    found.push((at, u64::from_le_bytes(value.try_into().unwrap())));
                    Ok(())
                },
            )
            .unwrap();
        found
    }

    #[test]
    fn keys_close_together_and_far_apart_are_found_alike() {
        let run = test_store("sorted-reads", vec![None]);
        let store = run.processor(0).unwrap();
        // Every even key below 100,000 holds its number times ten.
        for i in (0..100_000).step_by(2) {
            store.insert(&key(i), &(i * 10).to_le_bytes()).unwrap();
        }
        let mut reads = SortedReads::default();
        // Close together: one scan, the odd keys absent.
        let close: Vec<u64> = (500..600).collect();
        let found = read(&mut reads, &store, &close);
        let expected: Vec<(usize, u64)> = (0..100)
            .step_by(2)
            .map(|at| (at, (500 + at as u64) * 10))
            .collect();
        assert_eq!(found, expected);
        assert_eq!(reads.backoff, 0, "the scan settled every key");
        // Far apart: the scan gives up, and the rest are read one by one.
        let far: Vec<u64> = (0..40).map(|i| i * 2_000).collect();
        let found = read(&mut reads, &store, &far);
        let expected: Vec<(usize, u64)> = (0..40).map(|at| (at, at as u64 * 20_000)).collect();
        assert_eq!(found, expected);
        assert_eq!(reads.backoff, 1, "no scan for the next read");
        // While backing off, keys close together are read one by one, with the same result.
        let found = read(&mut reads, &store, &close);
        assert_eq!(found.len(), 50);
        assert_eq!(reads.backoff, 0);
        // A key the filter rules out is not read one by one.
        let keys = [key(4)];
        let keys: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let mut found = 0;
        reads
            .read(
                &store,
                &keys,
                |_| false,
                |_, _| {
                    found += 1;
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(found, 0);
    }
}
