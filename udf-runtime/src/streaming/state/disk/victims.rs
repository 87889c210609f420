//! Which resident keys move out: about the least recently used ones, in slot order.
//!
//! Sorting every slot by its last use costs more than moving the keys out once a million keys
//! are resident, so a sample of the uses picks a cut-off and one pass in slot order takes the
//! slots used at or before it. The slot-indexed stores are then walked front to back, not at
//! random. Small tables, and a cut-off the sample put too low, take the exact way.

/// Uses sampled to pick the cut-off.
const SAMPLE: usize = 4096;
/// Below this many slots in use, the exact way is cheap enough.
const EXACT_BELOW: usize = 4 * SAMPLE;

/// Puts into `out` (cleared first) `count` slots in use (`last_use[slot] > 0`) that were used
/// least recently, or close to it, in slot order; all of them if fewer are in use.
pub fn least_recently_used(last_use: &[u64], in_use: usize, count: usize, out: &mut Vec<u32>) {
    out.clear();
    if count == 0 {
        return;
    }
    if in_use >= EXACT_BELOW && count < in_use {
        let cut = sampled_cut(last_use, in_use, count);
        let taken = last_use
            .iter()
            .enumerate()
            .filter(|&(_, &used)| used > 0 && used <= cut)
            .map(|(slot, _)| slot as u32)
            .take(count);
        out.extend(taken);
        if out.len() == count {
            return;
        }
        out.clear();
    }
    exact(last_use, count, out);
}

/// The last use below which about `count` of the `in_use` slots in use lie, from a sample.
fn sampled_cut(last_use: &[u64], in_use: usize, count: usize) -> u64 {
    let step = (last_use.len() / SAMPLE).max(1);
    let mut sample: Vec<u64> = last_use
        .iter()
        .step_by(step)
        .copied()
        .filter(|&used| used > 0)
        .collect();
    if sample.is_empty() {
        return u64::MAX;
    }
    sample.sort_unstable();
    // A little above the share wanted, so one pass finds enough nearly always.
    let share = (count as f64 / in_use as f64 * 1.05).min(1.0);
    let at = ((sample.len() as f64 * share) as usize).min(sample.len() - 1);
    sample[at]
}

fn exact(last_use: &[u64], count: usize, out: &mut Vec<u32>) {
    let mut candidates: Vec<(u64, u32)> = last_use
        .iter()
        .enumerate()
        .filter(|&(_, &used)| used > 0)
        .map(|(slot, &used)| (used, slot as u32))
        .collect();
    let count = count.min(candidates.len());
    if count < candidates.len() {
        candidates.select_nth_unstable(count);
    }
    out.extend(candidates[..count].iter().map(|&(_, slot)| slot));
    out.sort_unstable();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_use(last_use: &[u64]) -> usize {
        last_use.iter().filter(|&&used| used > 0).count()
    }

    #[test]
    fn a_small_table_gives_exactly_the_least_recently_used_in_slot_order() {
        let last_use = [5, 0, 3, 9, 1, 0, 7, 2];
        let mut out = Vec::new();
        least_recently_used(&last_use, in_use(&last_use), 3, &mut out);
        assert_eq!(out, [2, 4, 7]);
        least_recently_used(&last_use, in_use(&last_use), 10, &mut out);
        assert_eq!(out, [0, 2, 3, 4, 6, 7]);
        least_recently_used(&last_use, in_use(&last_use), 0, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_large_table_gives_the_count_asked_for_from_the_oldest_uses() {
        // 100,000 slots; every tenth free; uses spread over 1,000 arrivals in a scrambled order.
        let last_use: Vec<u64> = (0..100_000u64)
            .map(|slot| {
                if slot % 10 == 0 {
                    0
                } else {
                    (slot.wrapping_mul(7_919) % 1_000) + 1
                }
            })
            .collect();
        let used = in_use(&last_use);
        let mut out = Vec::new();
        least_recently_used(&last_use, used, 9_000, &mut out);
        assert_eq!(out.len(), 9_000);
        assert!(out.windows(2).all(|w| w[0] < w[1]), "slot order");
        assert!(out.iter().all(|&slot| last_use[slot as usize] > 0));
        // The exact cut is use 100; the sampled one may sit a little above it.
        let newest = out.iter().map(|&slot| last_use[slot as usize]).max();
        assert!(newest <= Some(120), "newest taken use {newest:?}");
    }

    #[test]
    fn uses_all_alike_still_give_the_count() {
        let last_use = vec![4u64; 50_000];
        let mut out = Vec::new();
        least_recently_used(&last_use, last_use.len(), 5_000, &mut out);
        assert_eq!(out.len(), 5_000);
        assert_eq!(out[0], 0);
        assert!(out.windows(2).all(|w| w[0] < w[1]));
    }
}
