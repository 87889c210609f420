//! Checkpoints of a table aggregation: per group its key (Arrow's row format), whether its
//! `emit_value` rows are out (the next change retracts them), and its accumulator as the
//! function encodes it. A restore into another partition count keeps the groups routed to
//! this partition. With the disk backend the groups on disk are saved beside those in
//! memory, and a restore beyond the memory budget moves groups out again.

use serde::{Deserialize, Serialize};

use super::aggregation::{Keys, TableAggregation};
use crate::streaming::state::KeepKeys;
use crate::streaming::state::packed::Pairs;

/// Changes whenever the layout below does.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Saved {
    format: u32,
    function: String,
    /// (group key, emitted flag byte then the accumulator).
    groups: Pairs,
}

impl TableAggregation {
    /// Every group's state, as bytes; with the disk backend those of the groups on disk too
    /// (each entry there not shadowed by the group's copy in memory).
    pub fn snapshot(&mut self) -> Result<Vec<u8>, String> {
        // Without GROUP BY keys the one group exists once a row came.
        let groups = match &self.keys {
            Keys::Single => usize::from(!self.emitted.is_empty()),
            Keys::Columns { .. } => self.keys.count(),
        };
        let mut saved = Pairs::default();
        for group in 0..groups {
            let entry = self.entry(group)?;
            saved.push(self.keys.key_bytes(group), &entry);
        }
        if let Some(disk) = &self.disk {
            disk.each_entry(|key, entry| {
                if !self.keys.has_bytes(key) {
                    saved.push(key, entry);
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        }
        let saved = Saved {
            format: FORMAT,
            function: self.name.clone(),
            groups: saved,
        };
        postcard::to_stdvec(&saved)
            .map_err(|e| format!("the accumulators could not be encoded: {e}"))
    }

    /// Takes the groups of `snapshot` (those `keep` says are this partition's, when given),
    /// beside any taken before.
    pub fn restore(&mut self, snapshot: &[u8], keep: Option<&KeepKeys<'_>>) -> Result<(), String> {
        let function = self.name.clone();
        let saved: Saved = postcard::from_bytes(snapshot)
            .map_err(|e| format!("the snapshot of `{function}` does not read: {e}"))?;
        if saved.format != FORMAT {
            return Err(format!(
                "the snapshot of `{function}` has format {}, this build reads format {FORMAT}",
                saved.format
            ));
        }
        let groups = saved
            .groups
            .iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("the snapshot of `{function}` does not read: {e}"))?;
        let kept = match keep {
            None => vec![true; groups.len()],
            Some(keep) => {
                let keys: Vec<&[u8]> = groups.iter().map(|(key, _)| *key).collect();
                let arrays = self.keys.arrays_of_bytes(&keys)?;
                keep(&arrays, keys.len()).map_err(|e| e.to_string())?
            }
        };
        for ((key, value), kept) in groups.into_iter().zip(kept) {
            if !kept {
                continue;
            }
            let group = self.keys.group_of_bytes(key);
            let Some((&emitted, state)) = value.split_first() else {
                return Err(format!("the snapshot of `{function}` holds an empty group"));
            };
            self.groups
                .restore_state(group, state)
                .map_err(|e| format!("the accumulators of `{function}`: {e}"))?;
            if self.emitted.len() <= group {
                self.emitted.resize(group + 1, false);
            }
            self.emitted[group] = emitted == 1;
        }
        // A snapshot larger than the memory budget goes back to disk.
        self.move_out_if_full()
    }
}
