//! Barrier alignment in a processor's inbox. Once a source's barrier arrives, what that
//! source sends next belongs after the checkpoint: it is held back until every source's
//! barrier has come (or the source ended), then the processor saves its state — a cut
//! through every source at its barrier — and the held messages follow in order.

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

    /// The next message released by an alignment, if any.
    pub fn released(&mut self) -> Option<Routed> {
        while self.current.is_none() {
            let message = self.released.pop_front()?;
            // A held message may be a barrier of the next checkpoint.
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

    /// The checkpoint, once every source's barrier has come.
    fn aligned(&mut self) -> Option<Routed> {
        let complete = (0..self.arrived.len()).all(|s| self.arrived[s] || self.ended[s]);
        if !complete {
            return None;
        }
        let (barrier, since) = self.current.take()?;
        self.arrived.fill(false);
        let held = std::mem::take(&mut self.held);
        // Released in order, after anything released before.
        self.released.extend(held);
        Some(Routed::Checkpoint {
            barrier,
            alignment: since.elapsed(),
        })
    }
}
