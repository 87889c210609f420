//! Barrier alignment in a processor's inbox. Once a source's barrier arrives, what that
//! source sends next belongs after the checkpoint: it is held back until every source's
//! barrier has come (or the source ended), then the processor saves its state — a cut
//! through every source at its barrier — and the held messages follow in order.
//!
//! Barriers carry their checkpoint's id. A source that never emitted the barrier being
//! aligned (the checkpoint was abandoned, timed out, before the source got to it) sends the
//! next one's instead: the one being aligned can then never complete here, so it is given
//! up and what was held goes on as if it had never started. Taking the newer barrier for
//! the older would save a cut through two checkpoints.

use std::collections::VecDeque;
use std::time::Instant;

use super::routed::Routed;
use crate::checkpoint::barrier::Barrier;

pub struct Aligner {
    /// Per source: its barrier has come.
    arrived: Vec<bool>,
    ended: Vec<bool>,
    /// The checkpoint being aligned, since its first barrier came.
    current: Option<(Barrier, Instant)>,
    held: VecDeque<Routed>,
    /// Aligned: the checkpoint, then the messages held.
    released: VecDeque<Routed>,
}

impl Aligner {
    pub fn new(sources: usize) -> Self {
        Aligner {
            arrived: vec![false; sources],
            ended: vec![false; sources],
            current: None,
            held: VecDeque::new(),
            released: VecDeque::new(),
        }
    }

    /// The next message released by an alignment, if any. Released messages are offered
    /// again in their order (one may be held again: a barrier of the next checkpoint may be
    /// among them), and all of them before anything newer from the inbox.
    pub fn released(&mut self) -> Option<Routed> {
        while let Some(message) = self.released.pop_front() {
            if let Some(message) = self.offer(message) {
                return Some(message);
            }
        }
        None
    }

    /// `message` as it arrives: what to hand the processor now, if anything.
    pub fn offer(&mut self, message: Routed) -> Option<Routed> {
        let Some(source) = message.source() else {
            return Some(message);
        };
        if self.current.is_some() && self.arrived[source] {
            self.held.push_back(message);
            return None;
        }
        match message {
            Routed::Barrier { source, barrier } => {
                if let Some((current, _)) = &self.current
                    && barrier.id != current.id
                {
                    if barrier.id < current.id {
                        // Of a checkpoint given up before: nothing waits for it.
                        return None;
                    }
                    self.give_up();
                    self.released
                        .push_front(Routed::Barrier { source, barrier });
                    return None;
                }
                if self.current.is_none() {
                    self.current = Some((barrier, Instant::now()));
                }
                self.arrived[source] = true;
                self.aligned()
            }
            Routed::End { source } => {
                self.ended[source] = true;
                if let Some(checkpoint) = self.aligned() {
                    // The end first: it came before anything held; then the checkpoint
                    // (which cannot complete: this source never sent its barrier).
                    self.released.push_front(checkpoint);
                }
                Some(message)
            }
            message => Some(message),
        }
    }

    /// Stops aligning the current checkpoint: what was held goes on, before anything not
    /// yet offered.
    fn give_up(&mut self) {
        self.current = None;
        self.arrived.fill(false);
        self.release_held();
    }

    fn release_held(&mut self) {
        while let Some(message) = self.held.pop_back() {
            self.released.push_front(message);
        }
    }

    /// The checkpoint, once every source's barrier has come.
    fn aligned(&mut self) -> Option<Routed> {
        let complete = (0..self.arrived.len()).all(|s| self.arrived[s] || self.ended[s]);
        if !complete {
            return None;
        }
        let (barrier, since) = self.current.take()?;
        self.arrived.fill(false);
        // Held messages came before anything still waiting to be offered again.
        self.release_held();
        Some(Routed::Checkpoint {
            barrier,
            alignment: since.elapsed(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use datafusion::arrow::array::RecordBatch;
    use datafusion::arrow::datatypes::Schema;

    use super::*;
    use crate::checkpoint::barrier::Pending;
    use crate::checkpoint::manifest::Manifest;

    /// Rows from `source`, told apart by `label`.
    fn rows(source: usize, label: i64) -> Routed {
        Routed::Rows {
            source,
            batch: RecordBatch::new_empty(Arc::new(Schema::empty())),
            times: None,
            before: None,
            after: None,
            now: label,
        }
    }

    fn barrier(source: usize, id: u64) -> Routed {
        let manifest = Manifest::new(id, "u", "f", false, 0);
        let pending = Pending::new(manifest, PathBuf::from("unused"), 2, 1, 0, Vec::new());
        Routed::Barrier {
            source,
            barrier: Barrier {
                id,
                stop: false,
                end: false,
                pending,
            },
        }
    }

    /// What the processor is handed for `arriving`, in order: rows by label, checkpoints
    /// as `-id`, ends as `1000 + source`.
    fn handed(aligner: &mut Aligner, arriving: Vec<Routed>) -> Vec<i64> {
        let mut out = Vec::new();
        let mut note = |message: Routed| match message {
            Routed::Rows { now, .. } => out.push(now),
            Routed::Checkpoint { barrier, .. } => out.push(-(barrier.id as i64)),
            Routed::End { source } => out.push(1000 + source as i64),
            Routed::Barrier { .. } => panic!("a barrier reaches the processor"),
        };
        for message in arriving {
            while let Some(message) = aligner.released() {
                note(message);
            }
            if let Some(message) = aligner.offer(message) {
                note(message);
            }
        }
        while let Some(message) = aligner.released() {
            note(message);
        }
        out
    }

    #[test]
    fn rows_after_a_barrier_wait_for_the_other_sources_barrier() {
        let mut aligner = Aligner::new(2);
        let arriving = vec![
            rows(0, 1),
            barrier(0, 1),
            rows(0, 2),
            rows(1, 3),
            rows(0, 4),
            barrier(1, 1),
            rows(1, 5),
        ];
        assert_eq!(handed(&mut aligner, arriving), [1, 3, -1, 2, 4, 5]);
    }

    #[test]
    fn a_next_barrier_among_the_held_rows_holds_again_and_keeps_each_sources_order() {
        let mut aligner = Aligner::new(2);
        let arriving = vec![
            barrier(0, 1),
            rows(0, 1),
            barrier(0, 2),
            rows(0, 2),
            rows(1, 3),
            barrier(1, 1),
            // Offered while source 0's rows of checkpoint 2 are still held.
            rows(1, 4),
            barrier(1, 2),
            rows(1, 5),
        ];
        assert_eq!(
            handed(&mut aligner, arriving),
            [3, -1, 1, 4, -2, 2, 5],
            "checkpoint 2's cut: source 0 after row 1, source 1 after row 4"
        );
    }

    #[test]
    fn a_source_that_skipped_the_checkpoint_gives_it_up_instead_of_mixing_two() {
        let mut aligner = Aligner::new(2);
        let arriving = vec![
            barrier(0, 1),
            rows(0, 1),
            // Source 1 never emitted checkpoint 1's barrier: it was abandoned first.
            rows(1, 2),
            barrier(1, 2),
            rows(1, 3),
            rows(0, 4),
            barrier(0, 2),
            rows(0, 5),
        ];
        assert_eq!(
            handed(&mut aligner, arriving),
            [2, 1, 4, -2, 3, 5],
            "no checkpoint 1; checkpoint 2 after rows 2 and 4"
        );
    }

    #[test]
    fn an_ended_source_needs_no_barrier() {
        let mut aligner = Aligner::new(2);
        let arriving = vec![
            barrier(0, 1),
            rows(0, 1),
            rows(1, 2),
            Routed::End { source: 1 },
            rows(0, 3),
        ];
        assert_eq!(handed(&mut aligner, arriving), [2, 1001, -1, 1, 3]);
    }
}
